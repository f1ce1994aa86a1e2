package dev.lantern.cuda.codegen;

import java.util.regex.Pattern;

/**
 * What one generated kernel must compute, decided before any text is written: sizes that
 * are compile-time constants, dtypes, flags. One record per kernel family; each renders
 * itself to a {@link CudaKernelSource} for a {@link CudaTarget}. The renderer chooses the
 * fast or the general path from the spec, never from run-time data.
 */
public sealed interface KernelSpec
        permits ElementwiseSpec, CastSpec, NormSpec, SoftmaxSpec, RopeSpec, PermuteSpec, AttentionSpec, StridedCopySpec, GatherSpec,
                RowGradSpec, CrossEntropySpec, ReduceSpec, ScatterAddSpec, ScatterAddSortedSpec, AttentionBackwardSpec,
                NormWeightGradSpec, NormBackwardSpec {

    /** The kernel's entry name: a C identifier, unique within one module. */
    String name();

    CudaKernelSource render(CudaTarget target);

    Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,120}");

    static String checkName(String name) {
        if (name == null || !IDENT.matcher(name).matches()) {
            throw new CodegenException("kernel name must be a C identifier, got '" + name + "'");
        }
        return name;
    }

    static long checkPositive(long v, String what) {
        if (v < 1) {
            throw new CodegenException(what + " must be >= 1, got " + v);
        }
        return v;
    }
}
