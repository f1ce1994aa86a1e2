package dev.lantern.engine;

import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import org.junit.jupiter.api.Test;

class CompileSmokeTest {
    @Test
    void printsDecoder() {
        for (String cfg : new String[] {"cpu-small", "encoder-small"}) {
            for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
                CompiledModel m = Compiler.compile(TransformerBlock.build(BlockConfig.named(cfg), DType.F32).graph(),
                        CompileOptions.defaults().withAmp(amp));
                System.out.println("=== " + cfg + " " + amp);
                System.out.println(m.dump());
            }
        }
    }
}
