package io.hayloft.format.needle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class Crc32cTest {
    private static int crc(byte[] b, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(b, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void combineEqualsTheCrcOfTheConcatenationAtEverySplit() {
        Random rnd = new Random(3);
        for (int len : new int[] {0, 1, 7, 8, 63, 64, 1000, 70_000}) {
            byte[] b = new byte[len];
            rnd.nextBytes(b);
            int whole = crc(b, 0, len);
            for (int split : new int[] {0, len / 3, len / 2, len}) {
                assertThat(Crc32c.combine(crc(b, 0, split), crc(b, split, len), len - split))
                        .as("length %d split at %d", len, split).isEqualTo(whole);
            }
        }
        assertThatThrownBy(() -> Crc32c.combine(0, 0, -1)).hasMessageContaining("-1");
    }

    @Test
    void theReadCheckAgreesWithNeedleCheckAndYieldsTheDataCrc() {
        Random rnd = new Random(5);
        for (int n : new int[] {0, 1, 5, 8, 4096, 100_003}) {
            byte[] data = new byte[n];
            rnd.nextBytes(data);
            ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(n));
            Needle.encode(b, -1L, -1L, -1, 0, ByteBuffer.wrap(data));
            b.flip();
            int[] got = new int[1];
            assertThat(Needle.check(b, got)).isEqualTo(Needle.Check.OK);
            assertThat(got[0]).as("size %d", n).isEqualTo(crc(data, 0, n));
            // any flipped bit of data or of a covered header field fails both checks alike
            for (int at : new int[] {Needle.OFF_COOKIE, Needle.OFF_KEY + 7, Needle.OFF_ALT, Needle.HEADER_SIZE + n / 2}) {
                if (at >= Needle.HEADER_SIZE + n) {
                    continue;
                }
                ByteBuffer bad = ByteBuffer.wrap(b.array().clone());
                bad.put(at, (byte) (bad.get(at) ^ 0x10));
                assertThat(Needle.check(bad, new int[1])).as("size %d, byte %d", n, at).isEqualTo(Needle.check(bad))
                        .isEqualTo(Needle.Check.BAD_CRC);
            }
            ByteBuffer flagged = ByteBuffer.wrap(b.array().clone());
            flagged.put(Needle.OFF_FLAGS, (byte) Needle.FLAG_DELETED); // the flags byte is not covered
            assertThat(Needle.check(flagged, new int[1])).isEqualTo(Needle.Check.OK);
            ByteBuffer shortOne = ByteBuffer.wrap(b.array(), 0, b.limit() - 9);
            assertThat(Needle.check(shortOne, new int[1])).isEqualTo(Needle.check(shortOne)).isEqualTo(Needle.Check.SHORT);
        }
    }
}
