package dev.lantern.ir;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A graph that breaks a shape, dtype or layout rule is rejected with the node printed. */
class VerifierTest {
    private static final String HEAD = """
            graph @g {
              %a = input {name="a"} : f32[2,3]
              %b = input {name="b"} : f32[3,4]
              %h = input {name="h"} : bf16[2,3]
            """;

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            inner dims         | %0 = matmul(%a, %a) : f32[2,3]                    | matmul inner dimensions differ
            wrong result shape | %0 = matmul(%a, %b) : f32[2,5]                    | expected result type f32[2,4], found f32[2,5]
            dtype mix          | %0 = add(%a, %h) : f32[2,3]                       | inputs must share a dtype
            no broadcast       | %0 = add(%a, %b) : f32[2,3]                       | do not broadcast
            bad reshape        | %0 = reshape(%a) {shape=[4,2]} : f32[4,2]         | changes the element count
            bad perm           | %0 = permute(%a) {perm=[0,0]} : f32[2,2]          | is not a permutation
            norm weight        | %0 = rms_norm(%a, %b) : f32[2,3]                  | norm parameter 1 must have shape [3]
            rope rank          | %0 = rope(%a) : f32[2,3]                          | rope expects (batch, heads, seq, head_dim)
            strided non-view   | %0 = gelu(%a) : f32[2,3]@[1,2]                    | writes contiguous outputs
            cast target        | %0 = cast(%a) {to="f8"} : f32[2,3]                | cast to unknown dtype
            slice range        | %0 = slice(%a) {axis=1, end=9, start=0} : f32[2,9] | outside axis 1
            """)
    void rejects(String what, String line, String message) {
        Graph g = IrParser.parse(HEAD + "  " + line + "\n  return %0\n}\n");
        VerifyException e = assertThrows(VerifyException.class, () -> Verifier.verify(g));
        assertTrue(e.getMessage().contains(message), () -> what + ": " + e.getMessage());
        assertEquals(line.strip(), e.node(), "the error names the node in text syntax");
        assertTrue(e.getMessage().startsWith("verify: %0 = "), e.getMessage());
    }
}
