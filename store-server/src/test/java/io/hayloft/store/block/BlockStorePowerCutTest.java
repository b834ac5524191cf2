package io.hayloft.store.block;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.StoreOperationException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Block files on a {@link SimulatedDisk} with a power cut before a random fsync: an acknowledged
 * put reads back exact (an interrupted put leaves the old block or the new one, never a mix), an
 * acknowledged delete stays deleted, an acknowledged append (with {@code fsync}) is covered by the
 * block's bytes; an append in flight leaves the old bytes followed by a prefix of the new ones.
 */
class BlockStorePowerCutTest {
    private static final Path DIR = Path.of("/sim/blocks");
    private static final int NAMES = 6;

    @Test
    void acknowledgedBlockOperationsSurviveAPowerCut() throws Exception {
        for (long seed = 0; seed < 200; seed++) {
            SimulatedDisk disk = new SimulatedDisk(seed);
            Random r = new Random(seed);
            BlockStore blocks = new BlockStore(disk.session(), DIR, true);
            Map<String, byte[]> acked = new HashMap<>();
            String flying = null;
            byte[] old = null;
            long cutAt = 1 + r.nextInt(40);
            AtomicLong forces = new AtomicLong();
            disk.beforeForce(p -> {
                if (forces.incrementAndGet() == cutAt) {
                    disk.powerCut();
                }
            });
            try {
                for (int i = 0; i < 60 && disk.powerCuts() == 0; i++) {
                    String name = "b" + r.nextInt(NAMES);
                    flying = name;
                    old = acked.get(name);
                    int op = r.nextInt(4);
                    if (op == 0 || !acked.containsKey(name)) {
                        byte[] b = new byte[r.nextInt(5000)];
                        r.nextBytes(b);
                        blocks.put(name, ByteBuffer.wrap(b));
                        acked.put(name, b);
                    } else if (op == 1) {
                        byte[] more = new byte[1 + r.nextInt(700)];
                        r.nextBytes(more);
                        blocks.append(name, ByteBuffer.wrap(more));
                        byte[] b = Arrays.copyOf(old, old.length + more.length);
                        System.arraycopy(more, 0, b, old.length, more.length);
                        acked.put(name, b);
                    } else {
                        blocks.delete(name);
                        acked.remove(name);
                    }
                    flying = null;
                }
            } catch (Exception e) {
                assertThat(disk.powerCuts()).as("seed %d: failed without a power cut: %s", seed, e).isPositive();
            }
            disk.beforeForce(null);
            if (disk.powerCuts() == 0) {
                disk.powerCut();
            }
            BlockStore after = new BlockStore(disk.session(), DIR, true);
            for (int n = 0; n < NAMES; n++) {
                String name = "b" + n;
                byte[] got = read(after, name);
                byte[] want = acked.get(name);
                if (name.equals(flying)) {
                    boolean isNew = want == null ? got == null : Arrays.equals(got, want);
                    boolean isOld = old == null ? got == null : Arrays.equals(got, old);
                    boolean partialAppend = old != null && got != null && got.length >= old.length
                            && Arrays.equals(Arrays.copyOf(got, old.length), old);
                    assertThat(isNew || isOld || partialAppend).as("seed %d: block %s in flight", seed, name).isTrue();
                } else if (want == null) {
                    assertThat(got).as("seed %d: block %s was deleted or never written", seed, name).isNull();
                } else {
                    assertThat(got).as("seed %d: block %s", seed, name).isEqualTo(want);
                }
            }
        }
    }

    private static byte[] read(BlockStore blocks, String name) throws Exception {
        try {
            ByteBuffer b = blocks.read(name, 0, -1);
            byte[] got = new byte[b.remaining()];
            b.get(got);
            return got;
        } catch (StoreOperationException e) {
            assertThat(e.reason()).isEqualTo(StoreOperationException.Reason.BLOCK_NOT_FOUND);
            return null;
        }
    }
}
