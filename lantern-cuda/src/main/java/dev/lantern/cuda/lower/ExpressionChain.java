package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.ElementwiseOp;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.ElementwiseExpr;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import java.util.ArrayList;
import java.util.List;

/**
 * An elementwise IR node as the step chain of an {@link ElementwiseSpec}: a fused node's
 * expression, or a primitive op as a one-call expression, walked post-order. Values are numbered
 * inputs first, then one per step; the last value is the result.
 */
final class ExpressionChain {
    private ExpressionChain() {}

    /** The steps computing {@code n} from its {@code inputs} operands. */
    static List<ElementwiseSpec.Step> of(Node n, int inputs) {
        ElementwiseExpr e = n.op() == Op.ELEMENTWISE_FUSED ? ElementwiseExpr.parse(n.attrs().getString("expr", "")) : primitive(n);
        List<ElementwiseSpec.Step> chain = new ArrayList<>();
        int result = walk(e, inputs, chain);
        if (result != inputs + chain.size() - 1 && !(chain.isEmpty() && result == 0)) {
            chain.add(ElementwiseSpec.Step.constant(ElementwiseOp.ADD_CONST, result, 0.0)); // the result must be the last value
        }
        return chain;
    }

    private static ElementwiseExpr primitive(Node n) {
        String fn = switch (n.op()) {
            case GELU -> n.attrs().getString("approximate", "tanh").equals("tanh") ? "gelu_tanh" : "gelu_erf";
            // autodiff's helper, named as in a fused expression
            case GELU_GRAD -> n.attrs().getString("approximate", "tanh").equals("tanh") ? "gelu_tanh_grad" : "gelu_erf_grad";
            case CAST -> "cast_f32"; // the output dtype does the rounding
            default -> n.op().text();
        };
        List<ElementwiseExpr> args = new ArrayList<>();
        for (int i = 0; i < n.inputs().size(); i++) {
            args.add(new ElementwiseExpr.In(i));
        }
        return new ElementwiseExpr.Call(fn, args);
    }

    /** Post-order: appends steps for {@code e}, returns the value index holding it. */
    private static int walk(ElementwiseExpr e, int inputs, List<ElementwiseSpec.Step> chain) {
        return switch (e) {
            case ElementwiseExpr.In in -> in.index();
            case ElementwiseExpr.Const c -> {
                chain.add(ElementwiseSpec.Step.literal(c.value()));
                yield inputs + chain.size() - 1;
            }
            case ElementwiseExpr.Call c -> {
                List<Integer> args = new ArrayList<>();
                for (ElementwiseExpr a : c.args()) {
                    args.add(walk(a, inputs, chain));
                }
                switch (c.fn()) {
                    case "cast_f32" -> {
                        yield args.getFirst();
                    }
                    case "cast_bf16" -> chain.add(ElementwiseSpec.Step.round(args.getFirst(), DType.BF16));
                    case "cast_f16" -> chain.add(ElementwiseSpec.Step.round(args.getFirst(), DType.F16));
                    default -> chain.add(new ElementwiseSpec.Step(ElementwiseOp.forIrName(c.fn())
                            .orElseThrow(() -> new CodegenException("no CUDA elementwise op for '" + c.fn() + "'")), args));
                }
                yield inputs + chain.size() - 1;
            }
        };
    }
}
