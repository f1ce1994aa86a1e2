package dev.lantern.cuda.ffi;

import java.util.List;

/**
 * Where one NVIDIA library was looked for and what came of it, for {@code ./lantern doctor}.
 *
 * @param label      short name, e.g. "driver", "nvrtc"
 * @param fileNames  file names tried, e.g. ["libcuda.so.1", "libcuda.so"]
 * @param lookedIn   every place tried, in order (folders, then "loader default")
 * @param foundAt    the file that loaded, or "loader default (libcuda.so.1)", or null
 * @param failures   why candidates that existed did not load (bad ELF, wrong arch), in order
 */
public record LibraryProbe(String label, List<String> fileNames, List<String> lookedIn,
                           String foundAt, List<String> failures) {
    public LibraryProbe {
        fileNames = List.copyOf(fileNames);
        lookedIn = List.copyOf(lookedIn);
        failures = List.copyOf(failures);
    }

    public boolean found() {
        return foundAt != null;
    }

    /** One line for doctor: "nvrtc: found /usr/.../libnvrtc.so.13" or "nvrtc: not found (looked in ...)". */
    public String summary() {
        if (found()) {
            return label + ": found " + foundAt;
        }
        String why = failures.isEmpty() ? "" : "; failed to load: " + String.join("; ", failures);
        return label + ": not found (" + String.join(" or ", fileNames) + "; looked in "
                + String.join(", ", lookedIn) + why + ")";
    }
}
