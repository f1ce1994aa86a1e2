package dev.lantern.ir;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Malformed IR text fails with a line:column and what was expected. */
class ParseErrorTest {
    private static final String HEAD = "graph @g {\n  %x = input {name=\"x\"} : f32[2,3]\n";

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            unknown op          | %0 = frobnicate(%x) : f32[2,3]                 | 3 | 8  | unknown op 'frobnicate'
            undefined value     | %0 = gelu(%y) : f32[2,3]                       | 3 | 13 | use of undefined value %y
            wrong arity         | %0 = add(%x) : f32[2,3]                        | 3 | 8  | add takes 2 input(s), found 1
            unknown attribute   | %0 = gelu(%x) {flavour=1} : f32[2,3]           | 3 | 18 | gelu has no attribute 'flavour'
            wrong attr type     | %0 = softmax(%x) {causal=3} : f32[2,3]         | 3 | 28 | attribute 'causal' of softmax must be true or false
            missing attr        | %0 = reshape(%x) {} : f32[6]                   | 3 | 20 | reshape needs attribute 'shape'
            unknown dtype       | %0 = gelu(%x) : f31[2,3]                       | 3 | 19 | unknown dtype 'f31'
            missing colon       | %0 = gelu(%x) f32[2,3]                         | 3 | 17 | expected ':', found 'f32[2,3]'
            redefinition        | %x = gelu(%x) : f32[2,3]                       | 3 | 3  | value %x is defined twice
            unterminated string | %0 = cast(%x) {to="bf16} : bf16[2,3]           | 3 | 21 | unterminated string
            bad stride count    | %0 = permute(%x) {perm=[1,0]} : f32[3,2]@[1]   | 3 | 47 | 1 strides for a shape of rank 2
            """)
    void reportsPosition(String what, String line, int row, int col, String message) {
        String text = HEAD + "  " + line + "\n  return %x\n}\n";
        ParseException e = assertThrows(ParseException.class, () -> IrParser.parse(text));
        assertTrue(e.getMessage().contains(message), () -> what + ": " + e.getMessage());
        assertEquals(row, e.line(), () -> what + ": " + e.getMessage());
        assertEquals(col, e.column(), () -> what + ": " + e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ''                                                   | 1:1: expected 'graph', found the end of the file
            graph g {}                                           | 1:7: expected '@'
            graph @g { return %x }                               | 1:19: return of undefined value %x
            graph @g { %x = input {name="x"} : f32[2] return %x  | expected '}', found the end of the file
            graph @g { %x = input {name="x"} : f32[2] return %x } junk | expected the end of the file after '}'
            """)
    void structure(String text, String message) {
        ParseException e = assertThrows(ParseException.class, () -> IrParser.parse(text));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }
}
