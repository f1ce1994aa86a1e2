package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Verifier;

/** verify: shapes, dtypes, attributes and layouts against every op's spec; the graph is returned unchanged. */
public final class VerifyPass implements Pass {
    @Override
    public String name() {
        return "verify";
    }

    @Override
    public String summary() {
        return "check shapes, dtypes, attributes and layouts against each op's spec";
    }

    @Override
    public Graph run(Graph g) {
        return Verifier.verify(g, name());
    }
}
