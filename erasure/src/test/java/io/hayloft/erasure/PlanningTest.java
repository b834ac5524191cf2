package io.hayloft.erasure;

import io.hayloft.erasure.kernel.Kernels;
import java.util.Arrays;
import java.util.stream.IntStream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** planDecode and planReadRange name exactly the bytes decode and readRange then read. */
class PlanningTest {

    @ParameterizedTest
    @EnumSource(CodecKind.class)
    void planDecodeCoversEveryByteDecodeReads(CodecKind kind) throws Exception {
        int unitSize = 1000;
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, Kernels.best(), 128)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(3), 10, unitSize));
            for (int[] erased : new int[][] {{0}, {3, 11}, {1, 2, 9, 13}, {10, 11, 12, 13}}) {
                Stripes.CountingReader reader = new Stripes.CountingReader(stripe, erased);
                byte[][] out = new byte[14][unitSize];
                codec.decode(unitSize, erased, reader, Stripes.into(out));
                List<ReadRange> plan = codec.planDecode(unitSize, erased);
                assertCovers(plan, reader);
                for (int u : erased) {
                    assertThat(out[u]).isEqualTo(stripe[u]);
                }
            }
            assertThat(codec.planDecode(unitSize)).isEmpty();
            assertThatThrownBy(() -> codec.planDecode(unitSize, 0, 1, 2, 3, 4)).isInstanceOf(TooManyErasuresException.class);
        }
    }

    @ParameterizedTest
    @EnumSource(CodecKind.class)
    void planReadRangeCoversEveryByteReadRangeReads(CodecKind kind) throws Exception {
        int unitSize = 1000;
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, Kernels.best(), 128)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(4), 10, unitSize));
            int[][] ranges = {{0, 1000}, {10, 300}, {480, 40}, {500, 500}, {999, 1}, {0, 0}};
            for (int unit : new int[] {0, 7, 12}) {
                for (int[] unavailable : new int[][] {{}, {1}, {2, 3, 13}}) {
                    for (int[] r : ranges) {
                        int[] forbidden = IntStream.concat(IntStream.of(unit),
                                Arrays.stream(unavailable)).toArray();
                        Stripes.CountingReader reader = new Stripes.CountingReader(stripe, forbidden);
                        ByteBuffer dst = ByteBuffer.allocate(r[1]);
                        long read = codec.readRange(unitSize, unit, r[0], dst, unavailable, reader);
                        assertThat(dst.array()).isEqualTo(Arrays.copyOfRange(stripe[unit], r[0], r[0] + r[1]));
                        List<ReadRange> plan = codec.planReadRange(unitSize, unit, r[0], r[1], unavailable);
                        assertThat(plan.stream().mapToLong(ReadRange::length).sum()).isEqualTo(read);
                        assertCovers(plan, reader);
                    }
                }
            }
            assertThatThrownBy(() -> codec.planReadRange(unitSize, 0, 990, 20)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("[990, 1010)");
            assertThatThrownBy(() -> codec.planReadRange(unitSize, 0, 0, 10, 1, 2, 3, 4))
                    .isInstanceOf(TooManyErasuresException.class);
        }
    }

    /** Every byte read lies in a planned range, and the plan holds no byte that was not read. */
    private static void assertCovers(List<ReadRange> plan, Stripes.CountingReader reader) {
        long planned = plan.stream().mapToLong(ReadRange::length).sum();
        assertThat(planned).isEqualTo(reader.bytes.get());
        for (ReadRange got : reader.log) {
            assertThat(plan).as("read %s is planned", got).anyMatch(p -> p.unit() == got.unit()
                    && p.offset() <= got.offset() && got.offset() + got.length() <= p.offset() + p.length());
        }
    }
}
