package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CastSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.cuda.codegen.GatherSpec;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.cuda.codegen.NormSpec;
import dev.lantern.cuda.codegen.PermuteSpec;
import dev.lantern.cuda.codegen.RopeSpec;
import dev.lantern.cuda.codegen.SoftmaxSpec;
import dev.lantern.cuda.codegen.RowGradSpec;
import dev.lantern.cuda.codegen.CrossEntropySpec;
import dev.lantern.cuda.codegen.NormWeightGradSpec;
import dev.lantern.cuda.codegen.NormBackwardSpec;
import dev.lantern.cuda.codegen.ReduceSpec;
import dev.lantern.cuda.codegen.ScatterAddSortedSpec;
import dev.lantern.cuda.codegen.ScatterAddSpec;

/**
 * Content-derived kernel names: a spec is rendered once under a fixed placeholder name, and
 * the entry becomes {@code <family>_<first 12 hex of the source hash>}. Equal kernels get equal
 * names and equal sources, so the module cache and the nvcc test compile each only once.
 */
public final class KernelNames {
    private KernelNames() {
    }

    public static final String PLACEHOLDER = "lt_kernel";

    public static CudaKernelSource render(KernelSpec spec, CudaTarget target) {
        String hash = withName(spec, PLACEHOLDER).render(target).sourceHash().substring(0, 12);
        return withName(spec, spec.name() + "_" + hash).render(target);
    }

    public static KernelSpec withName(KernelSpec s, String n) {
        return switch (s) {
            case ElementwiseSpec e -> new ElementwiseSpec(n, e.shape(), e.inputs(), e.steps(), e.outDtype());
            case CastSpec c -> new CastSpec(n, c.numel(), c.from(), c.to());
            case NormSpec x -> new NormSpec(n, x.kind(), x.rows(), x.cols(), x.eps(), x.inDtype(), x.weightDtype(), x.outDtype(),
                    x.residual(), x.bias());
            case SoftmaxSpec x -> new SoftmaxSpec(n, x.rows(), x.cols(), x.scale(), x.causal(), x.seqQ(), x.inDtype(), x.outDtype());
            case RopeSpec x -> new RopeSpec(n, x.rows(), x.seq(), x.headDim(), x.base(), x.offset(), x.interleaved(), x.inDtype(),
                    x.outDtype(), x.input(), x.inverse());
            case PermuteSpec x -> new PermuteSpec(n, x.inShape(), x.perm(), x.dtype());
            case StridedCopySpec x -> new StridedCopySpec(n, x.shape(), x.srcStrides(), x.dstStrides(), x.dtype());
            case GatherSpec x -> new GatherSpec(n, x.outer(), x.count(), x.rows(), x.inner(), x.dtype(), x.idsType());
            case RowGradSpec x -> new RowGradSpec(n, x.kind(), x.rows(), x.cols(), x.param(), x.inDtype(), x.weightDtype(), x.outDtype(),
                    x.residual());
            case CrossEntropySpec x -> new CrossEntropySpec(n, x.stage(), x.rows(), x.vocab(), x.ignore(), x.inDtype(), x.idsType(),
                    x.outDtype());
            case ReduceSpec x -> new ReduceSpec(n, x.stage(), x.keptDims(), x.keptStrides(), x.reducedDims(), x.reducedStrides(),
                    x.splits(), x.inDtype(), x.outDtype());
            case NormWeightGradSpec x -> new NormWeightGradSpec(n, x.stage(), x.kind(), x.rows(), x.cols(), x.eps(), x.xDtype(),
                    x.dyDtype(), x.outDtype());
            case NormBackwardSpec x -> new NormBackwardSpec(n, x.kind(), x.rows(), x.cols(), x.eps(), x.xDtype(), x.weightDtype(),
                    x.dyDtype(), x.outDtype(), x.residual());
            case ScatterAddSpec x -> new ScatterAddSpec(n, x.outer(), x.count(), x.size(), x.inner(), x.dtype(), x.idsType());
            case ScatterAddSortedSpec x -> new ScatterAddSortedSpec(n, x.stage(), x.outer(), x.count(), x.size(), x.inner(), x.dtype(),
                    x.idsType());
            case AttentionSpec x -> new AttentionSpec(n, x.batch(), x.heads(), x.seqQ(), x.seqK(), x.headDim(), x.causal(),
                    x.scale(), x.dtype(), x.ropeBase(), x.ropeKeys(), x.group(), x.masked(), x.lse());
            case AttentionBackwardSpec x -> new AttentionBackwardSpec(n, x.kind(), x.batch(), x.heads(), x.group(), x.seqQ(), x.seqK(),
                    x.headDim(), x.causal(), x.scale(), x.dtype(), x.masked());
        };
    }
}
