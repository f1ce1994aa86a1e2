package dev.lantern.cuda.codegen;

/** The launch configuration of one generated kernel as a function of its run-time sizes. */
@FunctionalInterface
public interface LaunchRule {
    LaunchConfig launch(ProblemSize size);
}
