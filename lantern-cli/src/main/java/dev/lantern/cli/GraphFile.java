package dev.lantern.cli;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Verifier;

import java.nio.file.Path;

/** An {@code .ir} file named on the command line ({@code run}, {@code compile}): read as UTF-8, parsed, verified. */
final class GraphFile {
    private GraphFile() {}

    /** The verified graph; a missing or unreadable file, a parse or a verify error is a typed error naming the file. */
    static Graph read(String file) {
        String text = TextFiles.readUtf8(Path.of(file)); // names the file itself
        try {
            return Verifier.verify(IrParser.parse(text), "verify");
        } catch (LanternException e) {
            throw new LanternException(file + ": " + e.getMessage(), e);
        }
    }
}
