package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;

/**
 * Canonicalize's two rules for weights stored in low precision and widened by a cast
 * ({@code cast(%w {bf16}) {to="f32"}}, as the Hugging Face frontend declares a bf16 checkpoint):
 * <pre>
 *   gather(cast(t {low}) {to=f32}, ids) -> cast(gather(t, ids)) {to=f32}
 *   slice(cast(t {low}) {to=f32})       -> cast(slice(t)) {to=f32}
 *       when every reader of the cast gathers rows from it or slices it (an embedding table,
 *       GPT-2's position table): the table stays in its stored bytes and only the rows read are
 *       widened (exact either way)
 *   cast(p {low} param) {to=f32}        -> p declared f32 (converted once, at bind time)
 *       when the cast is p's only reader and not a table read only in part
 * </pre>
 * The second keeps an f32 run as fast as before (no cast kernel per forward); under AMP autocast
 * narrows such a parameter back at bind time, so the stored bf16 and the bound bf16 are the same bytes.
 */
final class StoredCasts {
    private StoredCasts() {
    }

    static final List<Rule> RULES = List.of(
            Rule.of("read-part-before-upcast", StoredCasts::partBeforeUpcast),
            Rule.of("upcast-param-at-bind", StoredCasts::upcastAtBind));

    private static boolean low(DType d) {
        return d == DType.BF16 || d == DType.F16;
    }

    /** Whether {@code c} is read only in part: by gathers, as their table, and by slices. */
    private static boolean readInPart(Node c, RewriteContext cx) {
        List<Node> users = cx.users(c.name());
        return !users.isEmpty() && !cx.isOutput(c.name()) && users.stream().allMatch(u -> u.op() == Op.SLICE
                || u.op() == Op.GATHER && u.input(0).equals(c.name()) && !u.input(1).equals(c.name()));
    }

    private static Rewrite partBeforeUpcast(Node n, RewriteContext cx) {
        Node c = n.op() == Op.GATHER || n.op() == Op.SLICE ? cx.in(n, 0, Op.CAST) : null;
        if (c == null || c.type().dtype() != DType.F32 || !low(cx.type(c.input(0)).dtype()) || !readInPart(c, cx)) {
            return null;
        }
        DType src = cx.type(c.input(0)).dtype();
        List<String> ins = new java.util.ArrayList<>(n.inputs());
        ins.set(0, c.input(0));
        Node part = new Node(cx.fresh(), n.op(), ins, n.attrs(), n.type().contiguous().withDtype(src));
        return Rewrite.to(part, new Node(n.name(), Op.CAST, List.of(part.name()), Attrs.of("to", DType.F32.text()), n.type().contiguous()));
    }

    private static Rewrite upcastAtBind(Node n, RewriteContext cx) {
        Node p = n.op() == Op.CAST ? cx.in(n, 0, Op.PARAM) : null;
        if (p == null || n.type().dtype() != DType.F32 || !low(p.type().dtype()) || !cx.onlyUsedBy(p.name(), n) || readInPart(n, cx)) {
            return null;
        }
        return Rewrite.to(new Node(n.name(), Op.PARAM, List.of(), p.attrs(), n.type()));
    }
}
