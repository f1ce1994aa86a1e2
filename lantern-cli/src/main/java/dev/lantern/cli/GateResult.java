package dev.lantern.cli;

/**
 * One gate's verdict as the one line {@code .ci/gates} collects: {@code GATE <name> PASS|FAIL <figure>}.
 * The figure says what was measured and against which limit, so that a failed line is its own
 * explanation in a CI log.
 */
record GateResult(String name, boolean pass, String figure) {
    GateResult {
        if (name.isBlank() || name.contains(" ")) {
            throw new IllegalArgumentException("a gate name is one word, found '" + name + "'");
        }
        figure = ExitStatus.oneLine(figure);
    }

    String line() {
        return "GATE " + name + " " + (pass ? "PASS" : "FAIL") + " " + figure;
    }

    int exitCode() {
        return pass ? ExitStatus.OK : ExitStatus.BAD_INPUT;
    }
}
