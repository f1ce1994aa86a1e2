package dev.lantern.runtime.sched;

import dev.lantern.runtime.Device;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Issues a {@link Schedule} on a device: one stream per schedule stream (the last one
 * high-priority), an event per joined producer, and a pair of timing events around each task
 * so that the run yields measured {@link Interval}s and {@code overlap_pct}.
 */
public final class ScheduleExecutor {
    private ScheduleExecutor() {
    }

    /** What a run measured. */
    public record Trace(List<Interval> intervals, double overlapPct, double wallMs) {
    }

    public static Trace execute(TaskGraph graph, Schedule schedule, Device device) {
        int total = schedule.streams() + 1;
        List<Stream> streams = new ArrayList<>(total);
        List<Event> events = new ArrayList<>();
        try {
            for (int s = 0; s < total; s++) {
                streams.add(device.newStream(s == schedule.priorityStream()));
            }
            // Every stream waits for the origin event, so no task starts before time 0.
            Event origin = track(events, device.newEvent(true));
            streams.getFirst().record(origin);
            for (int s = 1; s < total; s++) {
                streams.get(s).waitFor(origin);
            }
            Map<Integer, Event> joinEvents = new HashMap<>(); // producer id -> event; looked up only
            Map<Integer, List<Schedule.Join>> joinsByConsumer = new HashMap<>();
            for (Schedule.Join j : schedule.joins()) {
                joinEvents.computeIfAbsent(j.producer(), p -> track(events, device.newEvent(false)));
                joinsByConsumer.computeIfAbsent(j.consumer(), c -> new ArrayList<>()).add(j);
            }
            Event[] begin = new Event[graph.size()];
            Event[] end = new Event[graph.size()];
            for (int id : schedule.order()) {
                Stream stream = streams.get(schedule.streamOf(id));
                for (Schedule.Join j : joinsByConsumer.getOrDefault(id, List.of())) {
                    stream.waitFor(joinEvents.get(j.producer()));
                }
                begin[id] = track(events, device.newEvent(true));
                end[id] = track(events, device.newEvent(true));
                stream.record(begin[id]);
                graph.task(id).work().issue(stream);
                stream.record(end[id]);
                Event produced = joinEvents.get(id);
                if (produced != null) {
                    stream.record(produced);
                }
            }
            for (Stream s : streams) {
                s.synchronize();
            }
            List<Interval> intervals = new ArrayList<>(graph.size());
            double wall = 0;
            for (int id : schedule.order()) {
                double a = begin[id].elapsedMillisSince(origin);
                double b = end[id].elapsedMillisSince(origin);
                intervals.add(new Interval(id, graph.task(id).kind(), schedule.streamOf(id), a, b));
                wall = Math.max(wall, b);
            }
            return new Trace(intervals, Interval.overlapPct(intervals), wall);
        } finally {
            events.forEach(Event::close);
            streams.forEach(Stream::close);
        }
    }

    private static Event track(List<Event> events, Event e) {
        events.add(e);
        return e;
    }
}
