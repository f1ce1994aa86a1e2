package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.lower.Step;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a compiled forward's time goes, step by step: each step timed alone, or every step timed
 * inside whole forwards with an event before each. Works on a session's bound steps (the
 * runnables its forward runs, in stream order).
 */
final class StepProfiler {
    private StepProfiler() {}

    /** A step as logs and profiles name it: {@code lt_norm_ab12 [registers]}, {@code gemm 3000x1536x1536 NONE +C}. */
    static String describe(Step s) {
        return switch (s) {
            case Step.Launch l -> l.source().entry() + " [" + l.source().variant() + "]";
            case Step.Gemm g -> "gemm " + g.spec().m() + "x" + g.spec().n() + "x" + g.spec().k()
                    + (g.spec().batch() > 1 ? " batch " + g.spec().batch() : "") + " " + g.spec().epilogue()
                    + (g.c() != null ? " +C" : "");
        };
    }

    /**
     * Every step timed alone (median of {@code iters} CUDA-event runs after {@code warm}), in
     * stream order. A step run alone finds its inputs in L2 more often than inside the forward, so
     * the sum can be a little below the forward's time.
     */
    static List<CudaSession.StepTime> alone(CudaExecutor s, List<Step> steps, List<Runnable> bound, int warm, int iters) {
        List<CudaSession.StepTime> out = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            out.add(new CudaSession.StepTime(describe(steps.get(i)), s.medianMs(bound.get(i), warm, iters)));
        }
        return out;
    }

    /**
     * A timing event before every step and one after the last, {@code iters} forwards after
     * {@code warm}; each step's median. Unlike {@link #alone}, every step sees the power, clock
     * and cache state it has in a real forward, and the steps add up to (about) the forward's time.
     */
    static List<CudaSession.StepTime> inForward(CudaExecutor s, List<Step> steps, List<Runnable> bound, int warm, int iters) {
        CudaStream stream = s.stream();
        int n = steps.size();
        for (int i = 0; i < warm; i++) {
            s.runSteps();
        }
        stream.synchronize();
        double[][] t = new double[n][iters];
        List<CudaEvent> events = new ArrayList<>();
        try {
            for (int i = 0; i <= n; i++) {
                events.add(s.device().newEvent(true));
            }
            for (int it = 0; it < iters; it++) {
                for (int i = 0; i < n; i++) {
                    stream.record(events.get(i));
                    bound.get(i).run();
                }
                stream.record(events.get(n));
                events.get(n).synchronize();
                for (int i = 0; i < n; i++) {
                    t[i][it] = events.get(i + 1).elapsedMillisSince(events.get(i));
                }
            }
        } finally {
            events.forEach(CudaEvent::close);
        }
        List<CudaSession.StepTime> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new CudaSession.StepTime(describe(steps.get(i)), EventTiming.median(t[i])));
        }
        return out;
    }

    /**
     * An eager session's steps timed inside whole eager forwards: an event before every step's launch
     * and one after the last ({@link EagerForward#run(CudaProgram, IntFunction, List)}), medians
     * over {@code iters} forwards. Each step's time includes the host's work up to the next launch,
     * so the times add up to the eager forward.
     */
    static List<CudaSession.StepTime> eager(CudaExecutor s, List<Step> steps, int warm, int iters) {
        CudaStream stream = s.stream();
        int n = steps.size();
        for (int i = 0; i < warm; i++) {
            s.runSteps();
        }
        stream.synchronize();
        double[][] t = new double[n][iters];
        List<CudaEvent> events = new ArrayList<>();
        try {
            for (int i = 0; i <= n; i++) {
                events.add(s.device().newEvent(true));
            }
            for (int it = 0; it < iters; it++) {
                s.runEagerMarked(events);
                events.get(n).synchronize();
                for (int i = 0; i < n; i++) {
                    t[i][it] = events.get(i + 1).elapsedMillisSince(events.get(i));
                }
            }
        } finally {
            events.forEach(CudaEvent::close);
        }
        List<CudaSession.StepTime> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new CudaSession.StepTime(describe(steps.get(i)), EventTiming.median(t[i])));
        }
        return out;
    }
}
