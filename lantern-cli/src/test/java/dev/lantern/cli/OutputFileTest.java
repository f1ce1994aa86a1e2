package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** --dump-ir's rules: regular files only, links followed to a regular file, the umask's mode, nothing half-written. */
class OutputFileTest {
    @TempDir
    Path dir;

    @BeforeEach
    void posixOnly() throws IOException {
        FileStore store = Files.getFileStore(dir);
        assumeTrue(store.supportsFileAttributeView("posix"), "the rules below are POSIX file rules");
    }

    @Test
    void aFifoIsRefusedAndStaysAFifo() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assumeTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "no mkfifo here");
        LanternException e = assertThrows(LanternException.class, () -> OutputFile.writeAtomically(fifo, "text\n"));
        assertEquals("cannot write " + fifo + ": it is a FIFO; only regular files are written", e.getMessage());
        assertTrue(Files.readAttributes(fifo, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther(), "still a FIFO");
        assertEquals(List.of(fifo), listing(), "no temporary file left");
    }

    @Test
    void foldersAndDevicesAreRefused() {
        LanternException root = assertThrows(LanternException.class, () -> OutputFile.writeAtomically(Path.of("/"), "x"));
        assertEquals("cannot write /: it is a folder; only regular files are written", root.getMessage());
        LanternException folder = assertThrows(LanternException.class, () -> OutputFile.writeAtomically(dir, "x"));
        assertTrue(folder.getMessage().endsWith(": it is a folder; only regular files are written"), folder.getMessage());
        // only the check: writing at a device is what must never happen, even in a test of the old code
        assumeTrue(Files.exists(Path.of("/dev/null")));
        LanternException dev = assertThrows(LanternException.class, () -> OutputFile.regularFileAt(Path.of("/dev/null")));
        assertEquals("cannot write /dev/null: it is a character device; only regular files are written", dev.getMessage());
    }

    @Test
    void aLinkToARegularFileIsFollowedAndStays() throws IOException {
        Path real = dir.resolve("real.ir");
        Files.writeString(real, "old\n");
        Path link = Files.createSymbolicLink(dir.resolve("link.ir"), real);
        OutputFile.writeAtomically(link, "new\n");
        assertTrue(Files.isSymbolicLink(link), "the link is kept");
        assertEquals("new\n", Files.readString(real));
        assertEquals(2, listing().size(), listing().toString());
    }

    @Test
    void aDanglingLinkIsRefusedAndNothingIsCreated() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("dangling.ir"), dir.resolve("nowhere.ir"));
        LanternException e = assertThrows(LanternException.class, () -> OutputFile.writeAtomically(link, "x"));
        assertTrue(e.getMessage().startsWith("cannot write " + link + ": it is a symbolic link to a missing file"), e.getMessage());
        assertTrue(Files.isSymbolicLink(link));
        assertFalse(Files.exists(dir.resolve("nowhere.ir")));
        assertEquals(List.of(link), listing());
    }

    @Test
    void aNewFileGetsTheUmasksModeAndAnOldOneKeepsItsMode() throws IOException {
        // what the umask gives a file created without an explicit mode
        Path probe = dir.resolve("probe");
        Files.newByteChannel(probe, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
        String umaskMode = PosixFilePermissions.toString(Files.getPosixFilePermissions(probe));
        Files.delete(probe);

        Path fresh = dir.resolve("fresh.ir");
        OutputFile.writeAtomically(fresh, "a\n");
        assertEquals(umaskMode, PosixFilePermissions.toString(Files.getPosixFilePermissions(fresh)));

        Path old = dir.resolve("old.ir");
        Files.writeString(old, "before\n");
        Files.setPosixFilePermissions(old, PosixFilePermissions.fromString("rw-r-----"));
        OutputFile.writeAtomically(old, "after\n");
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(old)));
        assertEquals("after\n", Files.readString(old));
        assertEquals(2, listing().size(), "no temporary files: " + listing());
    }

    @Test
    void aPermissionFailureSaysPermissionDenied() {
        // root passes every permission check, so the reason is checked on the exception Java throws
        assertEquals("permission denied", TextFiles.reason(new AccessDeniedException("/dir/.x.ir.1234.tmp")));
    }

    private List<Path> listing() throws IOException {
        try (var s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }
}
