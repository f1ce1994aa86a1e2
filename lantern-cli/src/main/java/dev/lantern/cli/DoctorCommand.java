package dev.lantern.cli;

import jdk.incubator.vector.FloatVector;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/** {@code lantern doctor}: what this machine gives Lantern. */
final class DoctorCommand {
    private DoctorCommand() {}

    static int run(List<String> argv, PrintStream out) {
        Args.parse("doctor", argv, Set.of(), Set.of()).noPositional("doctor");
        Runtime rt = Runtime.getRuntime();
        out.println("java      " + System.getProperty("java.vm.name") + " " + Runtime.version()
                + " (" + System.getProperty("java.vendor") + ") at " + System.getProperty("java.home"));
        int lanes = FloatVector.SPECIES_PREFERRED.length();
        out.println("cpu       " + rt.availableProcessors() + " cores, " + System.getProperty("os.arch")
                + ", vector width " + lanes * 32 + " bits (" + lanes + " f32 lanes), max heap " + (rt.maxMemory() >> 20) + " MiB");
        for (String line : CudaInfo.report()) {
            out.println(line);
        }
        return 0;
    }
}
