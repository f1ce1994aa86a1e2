package dev.lantern.frontend.nn;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link BlockConfig#parse}: {@code batch,seq,hidden,heads,mlp[,decoder|encoder]}, anything else a typed error. */
class BlockConfigParseTest {
    @Test
    void aDecoderByDefaultAndAnEncoderWhenAsked() {
        BlockConfig d = BlockConfig.parse("2,128,256,4,1024");
        assertEquals(new BlockConfig("2,128,256,4,1024,decoder", 2, 128, 256, 4, 1024, true), d);
        BlockConfig e = BlockConfig.parse(" 1, 16 ,64,2,128, encoder ");
        assertEquals(new BlockConfig("1,16,64,2,128,encoder", 1, 16, 64, 2, 128, false), e);
        // the name is the canonical text: it parses back to the same block
        assertEquals(e, BlockConfig.parse(e.name()));
        // the DESIGN.md shapes by size are the named blocks but for the name
        for (BlockConfig c : BlockConfig.ALL) {
            BlockConfig p = BlockConfig.parse(c.batch() + "," + c.seq() + "," + c.hidden() + "," + c.heads() + "," + c.mlp()
                    + (c.decoder() ? "" : ",encoder"));
            assertEquals(c.flops(), p.flops());
            assertEquals(c.decoder(), p.decoder());
            assertEquals(c.headDim(), p.headDim());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            empty               | ''                        | 1 fields
            four fields         | 2,128,256,4               | 4 fields
            seven fields        | 2,128,256,4,1024,decoder,x | 7 fields
            a word              | 2,128,big,4,1024          | hidden 'big' is not a positive integer
            negative            | 2,-128,256,4,1024         | seq '-128' is not a positive integer
            a float             | 2.5,128,256,4,1024        | batch '2.5'
            an empty field      | 2,,256,4,1024             | seq ''
            overflow            | 2,128,99999999999,4,1024  | hidden '99999999999'
            zero                | 0,128,256,4,1024          | must divide into 4 heads and every size must be > 0
            heads do not divide | 2,128,256,3,1024          | hidden 256 must divide into 3 heads
            unknown kind        | 2,128,256,4,1024,vision   | the kind is 'vision', expected decoder or encoder
            """)
    void badTextIsTyped(String what, String text, String message) {
        LanternException e = assertThrows(LanternException.class, () -> BlockConfig.parse(text.equals("''") ? "" : text));
        assertTrue(e.getMessage().contains(message), what + ": " + e.getMessage());
        assertTrue(e.getMessage().startsWith("bad block shape '"), e.getMessage());
    }
}
