package dev.lantern.cuda.codegen;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class CudaEmitterTest {
    @Test
    void blocksBalanceAndIndent() {
        CudaEmitter e = new CudaEmitter();
        e.block("for (int i = 0; i < n; ++i)", () -> e.block("if (i & 1)", () -> e.line("y[i] = x[i];")));
        assertEquals("""
                for (int i = 0; i < n; ++i) {
                  if (i & 1) {
                    y[i] = x[i];
                  }
                }
                """, e.text());
    }

    @Test
    void unrolledLoopCarriesPragma() {
        CudaEmitter e = new CudaEmitter();
        e.unrolled("k", "K", () -> e.line("acc += v[k];"));
        assertEquals("#pragma unroll\nfor (int k = 0; k < K; ++k) {\n  acc += v[k];\n}\n", e.text());
    }

    @Test
    void ifElseAndTail() {
        CudaEmitter e = new CudaEmitter();
        e.ifElse("a", () -> e.line("x();"), () -> e.line("y();"));
        e.block("struct S", () -> e.line("int a;"), ";");
        assertEquals("if (a) {\n  x();\n} else {\n  y();\n}\nstruct S {\n  int a;\n};\n", e.text());
    }

    @Test
    void formattedLinesUseDotDecimals() {
        CudaEmitter e = new CudaEmitter();
        e.linef("const float s = %.3ff;", 0.125);
        assertEquals("const float s = 0.125f;\n", e.text());
    }

    @Test
    void textInsideAnOpenScopeIsRejected() {
        CudaEmitter e = new CudaEmitter();
        IllegalStateException ex = assertThrows(IllegalStateException.class,
                () -> e.block("if (x)", () -> e.text()));
        assertEquals("unbalanced scopes: depth 1", ex.getMessage());
    }
}
