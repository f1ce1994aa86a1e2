package dev.lantern.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The chunk plan depends only on the tensors' sizes; every chunk runs once; a chunk's failure reaches the caller. */
class MultiTensorTest {
    static List<Parameter> params() {
        return List.of(Parameter.of("a", Tensor.allocate(DType.F32, Shape.of(2 * MultiTensor.CHUNK + 5))),
                Parameter.of("b", Tensor.allocate(DType.F32, Shape.of(1))),
                Parameter.of("c", Tensor.allocate(DType.F32, Shape.of(MultiTensor.CHUNK))));
    }

    @Test
    void chunksTileEachTensorAndIgnoreTheThreadCount() {
        List<MultiTensor.Chunk> one = new MultiTensor(params(), 1).chunks();
        assertEquals(new MultiTensor(params(), 3).chunks(), one);
        assertEquals(List.of(new MultiTensor.Chunk(0, 0, MultiTensor.CHUNK),
                new MultiTensor.Chunk(0, MultiTensor.CHUNK, 2L * MultiTensor.CHUNK),
                new MultiTensor.Chunk(0, 2L * MultiTensor.CHUNK, 2L * MultiTensor.CHUNK + 5),
                new MultiTensor.Chunk(1, 0, 1), new MultiTensor.Chunk(2, 0, MultiTensor.CHUNK)), one);
    }

    @Test
    void everyChunkRunsOnceOnAnyThreadCount() {
        for (int threads = 1; threads <= 4; threads++) {
            MultiTensor plan = new MultiTensor(params(), threads);
            AtomicLong elements = new AtomicLong();
            plan.forEach((p, i, start, end) -> elements.addAndGet(end - start));
            assertEquals(3L * MultiTensor.CHUNK + 6, elements.get());
            double[] sizes = plan.map((p, i, start, end) -> end - start);
            assertEquals(5, sizes.length);
            assertEquals(5, sizes[2]);
        }
    }

    @Test
    void aFailingChunkFailsTheCallAfterTheOthersFinish() {
        MultiTensor plan = new MultiTensor(params(), 2);
        AtomicLong ran = new AtomicLong();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> plan.forEach((p, i, start, end) -> {
            ran.incrementAndGet();
            if (i == 1) {
                throw new IllegalStateException("chunk of " + p.name());
            }
        }));
        assertEquals("chunk of b", e.getMessage());
        assertEquals(5, ran.get());
        assertThrows(TrainStateException.class, () -> new MultiTensor(List.of(params().get(0), params().get(0)), 1));
    }
}
