package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.reflect.AccessFlag;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The security gate's JNI check: Lantern's main bytecode declares no {@code native} method and
 * calls none of {@code System.load}, {@code System.loadLibrary}, {@code Runtime.load} and
 * {@code Runtime.loadLibrary}. Native code is reached through the FFM API only (the CUDA
 * driver, NVRTC, cuBLASLt), which needs {@code --enable-native-access} and cannot be loaded
 * behind the launcher's back. Read from the class files rather than the sources so that
 * generated code (the ONNX protobuf classes) is covered too. Not covered: a call made through
 * reflection or a method handle looked up by name, and the dependencies' own bytecode (ONNX
 * Runtime, a peer of the benchmarks, loads JNI; docs/security.md).
 */
final class JniScan {
    /** The methods that load a JNI library, as {@code owner.name} in internal form. */
    static final Set<String> LOADERS = Set.of("java/lang/System.load", "java/lang/System.loadLibrary",
            "java/lang/Runtime.load", "java/lang/Runtime.loadLibrary");

    /** One finding: the class file, and what it does. */
    record Finding(Path classFile, String what) {
        @Override
        public String toString() {
            return classFile.getFileName() + ": " + what;
        }
    }

    /** What a scan found over {@code classes} class files. */
    record Report(int classes, List<Finding> findings) {}

    private JniScan() {}

    /** Scans every {@code .class} file under each root (a missing root is an error: a gate that read nothing proves nothing). */
    static Report scan(List<Path> roots) {
        List<Finding> findings = new ArrayList<>();
        int classes = 0;
        for (Path root : roots) {
            if (!Files.isDirectory(root)) {
                throw new LanternException("jni scan: " + root + " is not a folder of class files (build first: ./lantern test)");
            }
            List<Path> files;
            try (Stream<Path> s = Files.walk(root)) {
                files = s.filter(p -> p.toString().endsWith(".class")).sorted().toList();
            } catch (IOException e) {
                throw new LanternException("jni scan: cannot read " + root + ": " + TextFiles.reason(e), e);
            }
            for (Path f : files) {
                findings.addAll(scanClass(f));
                classes++;
            }
        }
        return new Report(classes, findings);
    }

    /** The findings of one class file. */
    static List<Finding> scanClass(Path file) {
        ClassModel cm;
        try {
            cm = ClassFile.of().parse(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new LanternException("jni scan: cannot read " + file + ": " + TextFiles.reason(e), e);
        } catch (IllegalArgumentException e) {
            throw new LanternException("jni scan: " + file + " is not a class file: " + e.getMessage(), e);
        }
        List<Finding> out = new ArrayList<>();
        String owner = cm.thisClass().asInternalName().replace('/', '.');
        for (MethodModel m : cm.methods()) {
            String method = owner + "." + m.methodName().stringValue();
            if (m.flags().has(AccessFlag.NATIVE)) {
                out.add(new Finding(file, "native method " + method + m.methodType().stringValue()));
            }
            m.code().ifPresent((CodeModel code) -> code.forEach(e -> {
                if (e instanceof InvokeInstruction inv) {
                    String target = inv.owner().asInternalName() + "." + inv.name().stringValue();
                    if (LOADERS.contains(target)) {
                        out.add(new Finding(file, method + " calls " + target.replace('/', '.')));
                    }
                }
            }));
        }
        return out;
    }
}
