package dev.lantern.passes;

import dev.lantern.ir.Node;

import java.util.List;

/**
 * One rewrite: look at a node (and, through the context, its producers and users) and return the
 * nodes that replace it, or {@code null} when it does not match. The last replacement node must
 * keep the matched node's name and type so that users stay valid; producers that it absorbs
 * become dead and the engine drops them. Rules are small and live in tables, one per pass.
 */
public interface Rule {
    String name();

    Rewrite apply(Node n, RewriteContext cx);

    /**
     * The nodes that replace the matched one, the last of them taking its place; or, when
     * {@code alias} is set, no node at all: every use of the matched value reads {@code alias}.
     */
    record Rewrite(List<Node> nodes, String alias) {
        public Rewrite {
            nodes = List.copyOf(nodes);
            if (nodes.isEmpty() == (alias == null)) {
                throw new IllegalArgumentException("a rewrite is either nodes or an alias");
            }
        }

        public static Rewrite to(Node... n) {
            return new Rewrite(List.of(n), null);
        }

        public static Rewrite to(List<Node> n) {
            return new Rewrite(n, null);
        }

        /** Replace every use of the matched value by {@code value}. */
        public static Rewrite alias(String value) {
            return new Rewrite(List.of(), value);
        }
    }

    /** A named rule from a lambda, for the tables. */
    static Rule of(String name, java.util.function.BiFunction<Node, RewriteContext, Rewrite> body) {
        return new Rule() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Rewrite apply(Node n, RewriteContext cx) {
                return body.apply(n, cx);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
