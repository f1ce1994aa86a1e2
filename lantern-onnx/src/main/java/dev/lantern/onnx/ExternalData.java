package dev.lantern.onnx;

import onnx.Onnx.StringStringEntryProto;
import onnx.Onnx.TensorProto;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Weights stored beside the model file ({@code data_location = EXTERNAL}). A location must name a regular
 * file inside the model's folder: absolute paths, {@code ..} and links leading out are refused before any file
 * is opened. The bytes are mapped, not copied through the heap. With no folder (a model read from bytes),
 * external data is refused.
 */
final class ExternalData {
    private final Path folder;

    /** {@code folder}: the model's folder, or {@code null} when external data is not allowed. */
    ExternalData(Path folder) {
        this.folder = folder;
    }

    ByteBuffer read(TensorProto t, long want) {
        String location = null;
        long offset = 0;
        long length = -1;
        for (StringStringEntryProto e : t.getExternalDataList()) {
            switch (e.getKey()) {
                case "location" -> location = e.getValue();
                case "offset" -> offset = parse(t, e);
                case "length" -> length = parse(t, e);
                default -> { }
            }
        }
        String what = "tensor '" + t.getName() + "'";
        if (folder == null) {
            throw new OnnxImportException(what + " keeps its data in an external file, which needs the model's folder (import from a path)");
        }
        if (location == null || location.isEmpty()) {
            throw new OnnxImportException(what + " has external data without a location");
        }
        Path file = resolve(what, location);
        if (length >= 0 && length != want) {
            throw new OnnxImportException(what + " declares " + want + " bytes but its external data length is " + length);
        }
        try {
            long size = Files.size(file);
            if (offset < 0 || want > size - offset || offset > size) {
                throw new OnnxImportException(what + " reads bytes [" + offset + ", " + (offset + want) + ") of "
                        + location + ", which has " + size);
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                // an automatic arena: the mapping lives as long as the buffer that reads it
                return ch.map(FileChannel.MapMode.READ_ONLY, offset, want, Arena.ofAuto()).asByteBuffer();
            }
        } catch (IOException e) {
            throw new OnnxImportException(what + ": cannot read external data " + location + ": " + e.getMessage(), e);
        }
    }

    private Path resolve(String what, String location) {
        Path rel;
        try {
            rel = Path.of(location);
        } catch (RuntimeException e) {
            throw new OnnxImportException(what + ": external data location is not a path: " + location);
        }
        if (rel.isAbsolute() || location.startsWith("/") || location.startsWith("\\")) {
            throw new OnnxImportException(what + ": external data location " + location + " is absolute; it must be inside the model's folder");
        }
        for (Path part : rel) {
            if (part.toString().equals("..")) {
                throw new OnnxImportException(what + ": external data location " + location + " leads out of the model's folder");
            }
        }
        try {
            Path root = folder.toRealPath();
            Path real = root.resolve(rel).toRealPath();
            if (!real.startsWith(root)) {
                throw new OnnxImportException(what + ": external data location " + location + " is a link leading out of the model's folder");
            }
            if (!Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS)) {
                throw new OnnxImportException(what + ": external data location " + location + " is not a regular file");
            }
            return real;
        } catch (IOException e) {
            throw new OnnxImportException(what + ": external data " + location + " not found in the model's folder", e);
        }
    }

    private static long parse(TensorProto t, StringStringEntryProto e) {
        try {
            return Long.parseLong(e.getValue());
        } catch (NumberFormatException x) {
            throw new OnnxImportException("tensor '" + t.getName() + "': external data " + e.getKey() + " is not a number: " + e.getValue());
        }
    }
}
