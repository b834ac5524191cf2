package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Repairs of blocks many times larger than a repair window stream their sources (one GET per source
 * and substripe piece, not one per window), rebuild the exact bytes, hold at most two windows of
 * every source, keep Hitchhiker's 0.65 × RS reads, and survive a source store that dies mid-stream;
 * a drain moves multi-MiB blocks with one pull each; a reclaim reads its live needles in runs.
 */
class StreamRepairTest {

    static final long BLOCK = 4 << 20;
    static final int WINDOW = 64 << 10;

    @TempDir
    Path dir;

    private static RaidConfig config(TestCluster cluster, String codec, long block) {
        RaidConfig c = cluster.raidConfig(codec, block);
        c.transferBytes = 1 << 20;
        c.repairWindowBytes = WINDOW;
        c.requestTimeoutMillis = 20_000;
        return c;
    }

    @Test
    void multiMiBBlocksAreRebuiltBitExactFromStreamsHoldingAtMostTwoWindows() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            int rsVolume = cluster.writeVolume(120, 60_000);
            int hhVolume = cluster.writeVolume(120, 60_000);
            RaidNode rs = new RaidNode(config(cluster, "rs", BLOCK), runner);
            RaidNode hh = new RaidNode(config(cluster, "hh-xor+", BLOCK), runner);
            rs.encode(rsVolume);
            hh.encode(hhVolume);

            BlockFixer rsFixer = new BlockFixer(rs.cluster(), rs.config());
            long rsRead = loseAndRepairChecked(cluster, rsFixer, rsVolume, new int[] {1});
            BlockFixer hhFixer = new BlockFixer(hh.cluster(), hh.config());
            long hhRead = loseAndRepairChecked(cluster, hhFixer, hhVolume, new int[] {1});

            assertThat(rsRead).isEqualTo(10 * BLOCK);
            assertThat(hhRead).isEqualTo(13 * BLOCK / 2);
            assertThat((double) hhRead / rsRead).as("HH-XOR+ single repair reads ÷ RS").isEqualTo(0.65);
            // One streamed GET per (source, piece): 10 for RS, 13 half blocks for HH-XOR+; windowed
            // ranged reads would have sent 64 times as many (4 MiB / 64 KiB windows).
            assertThat(rsFixer.streamsOpened()).isEqualTo(10);
            assertThat(hhFixer.streamsOpened()).isEqualTo(13);
            for (BlockFixer f : List.of(rsFixer, hhFixer)) {
                assertThat(f.maxBytesHeld()).as("source bytes held per repair").isPositive()
                        .isLessThanOrEqualTo(2L * 10 * WINDOW).isLessThan(BLOCK);
            }

            // Two lost blocks and a corrupt one: a full decode, streamed as well.
            StripeMap m = hh.cluster().stripeMap(hhVolume);
            StripeMap.Block corrupt = m.stripes().get(0).blocks().get(12);
            cluster.stores.get(corrupt.store()).store().blocks().put(corrupt.name(), ByteBuffer.wrap(new byte[(int) BLOCK]));
            BlockFixer multi = new BlockFixer(hh.cluster(), hh.config());
            long read = loseAndRepairChecked(cluster, multi, hhVolume, new int[] {0, 11});
            assertThat(read).isEqualTo(10 * BLOCK);
            assertThat(multi.maxBytesHeld()).isLessThanOrEqualTo(2L * 10 * WINDOW);
            assertThat(multi.scan()).isEmpty();

            try (ColdReader reader = new ColdReader(hh.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after the repairs");
            }
            cluster.assertOnlyMappedBlocks(hh.cluster(), "after the repairs");
        }
    }

    @Test
    void aSourceStoreDyingMidStreamFailsThatAttemptAndTheRepairIsRetriedWithoutIt() throws Exception {
        long block = 16 << 20; // 8 MiB per stream: more than the socket buffers hold, so the store dies mid-body
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            int volume = cluster.writeVolume(120, 60_000);
            RaidNode raid = new RaidNode(config(cluster, "hh-xor+", block), runner);
            raid.encode(volume);
            StripeMap m = raid.cluster().stripeMap(volume);
            List<StripeMap.Block> blocks = m.stripes().get(0).blocks();
            int source;
            try (ErasureCodec codec = ErasureCodec.create(CodecKind.HH_XOR_PLUS, 10, 4)) {
                source = codec.planRepair(block, 1).stream().filter(r -> r.unit() != 1).findFirst().orElseThrow().unit();
            }
            String victim = blocks.get(source).store();
            byte[] original = bytesOf(cluster, blocks.get(1));
            cluster.stores.get(blocks.get(1).store()).store().blocks().delete(blocks.get(1).name());

            BlockFixer fixer = new BlockFixer(raid.cluster(), raid.config());
            int[] windows = {0};
            fixer.checkpoints(step -> {
                if (step.equals("window") && windows[0]++ == 1) {
                    try {
                        cluster.stopStore(victim); // its streams are cut mid-body
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            var damage = fixer.scan();
            assertThat(damage).hasSize(1);
            long read = fixer.repair(damage.get(0));

            assertThat(read).as("the retry decodes from k whole blocks without the dead store").isEqualTo(10 * block);
            assertThat(fixer.bytesRead()).as("the abandoned attempt's bytes are counted too").isGreaterThan(read);
            assertThat(fixer.streamsOpened()).as("13 half-block streams, then both halves of 10 units for the retry")
                    .isEqualTo(13 + 20);
            StripeMap after = raid.cluster().stripeMap(volume);
            assertThat(bytesOf(cluster, after.stripes().get(0).blocks().get(1))).isEqualTo(original);
            try (var spool = Files.list(dir)) {
                assertThat(spool.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("hayloft-repair-"));
            }
            // The dead store's blocks are what is left to repair; after that, nothing.
            BlockFixer.Report rest = new BlockFixer(raid.cluster(), raid.config()).repairAll();
            assertThat(rest.failures()).isEmpty();
            assertThat(new BlockFixer(raid.cluster(), raid.config()).scan()).isEmpty();
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after the repairs");
            }
            cluster.assertOnlyMappedBlocks(raid.cluster(), "after the repairs");
        }
    }

    @Test
    void aDrainMovesMultiMiBBlocksWithOnePullEachAndNoBytesThroughTheRaidNode() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 16); ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            int volume = cluster.writeVolume(120, 60_000);
            RaidNode raid = new RaidNode(config(cluster, "hh-xor+", BLOCK), runner);
            raid.encode(volume);
            StripeMap m = raid.cluster().stripeMap(volume);
            StripeMap.Block moving = m.stripes().get(0).blocks().get(0);
            String drained = moving.store();
            long onStore = m.allBlocks().stream().filter(b -> b.store().equals(drained)).mapToLong(StripeMap.Block::length).sum();
            byte[] original = bytesOf(cluster, moving);

            DrainJob drain = new DrainJob(raid.cluster(), raid.config(), Checkpoints.NONE);
            DrainJob.Result r = drain.drain(drained, DrainJob.Listener.NONE);

            assertThat(r.blocksCopied()).isPositive();
            assertThat(drain.bytesPulled()).as("block bytes pulled by the targets").isEqualTo(onStore
                    - (m.index().holders().contains(drained) ? m.index().length() : 0));
            StripeMap after = raid.cluster().stripeMap(volume);
            StripeMap.Block moved = after.stripes().get(0).blocks().get(0);
            assertThat(moved.store()).isNotEqualTo(drained);
            assertThat(bytesOf(cluster, moved)).isEqualTo(original);
            assertThat(after.allBlocks()).noneMatch(b -> b.store().equals(drained));
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after the drain");
            }
            cluster.assertOnlyMappedBlocks(raid.cluster(), "after the drain");
        }
    }

    @Test
    void aReclaimOfMultiMiBBlocksReadsLiveNeedlesInRunsAndRebuildsOneOnACorruptBlock() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            int volume = cluster.writeVolume(240, 30_000);
            RaidConfig config = config(cluster, "hh-xor+", BLOCK);
            config.transferBytes = 256 << 10;
            RaidNode raid = new RaidNode(config, runner);
            raid.encode(volume);
            List<Long> deleted = cluster.deletePhotos(volume, 0.4);
            // A byte of block 0 flipped in place, inside the live needles (the first 40% were deleted).
            StripeMap m = raid.cluster().stripeMap(volume);
            StripeMap.Block b0 = m.stripes().get(0).blocks().get(0);
            byte[] bytes = bytesOf(cluster, b0);
            bytes[(int) (m.volumeBytes() * 3 / 4)] ^= 0x5a;
            cluster.stores.get(b0.store()).store().blocks().put(b0.name(), ByteBuffer.wrap(bytes));

            ReclaimJob job = new ReclaimJob(raid.cluster(), config, Checkpoints.NONE);
            ReclaimJob.Result r = job.reclaim(volume, 0.3);

            assertThat(r.reclaimed()).isTrue();
            assertThat(job.runReads()).as("reads of runs of live needles").isPositive()
                    .isLessThan(r.before().liveNeedles() / 2);
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, deleted, "after the reclaim");
            }
            cluster.assertOnlyMappedBlocks(raid.cluster(), "after the reclaim");
        }
    }

    /** Loses {@code units} of stripe 0, repairs them, and checks the rebuilt blocks' bytes against the lost ones. */
    private static long loseAndRepairChecked(TestCluster cluster, BlockFixer fixer, int volume, int[] units) throws Exception {
        StripeMap m = fixer.cluster().stripeMap(volume);
        byte[][] before = new byte[units.length][];
        for (int i = 0; i < units.length; i++) {
            StripeMap.Block b = m.stripes().get(0).blocks().get(units[i]);
            before[i] = bytesOf(cluster, b);
            cluster.stores.get(b.store()).store().blocks().delete(b.name());
        }
        var damage = fixer.scan().stream().filter(d -> d.volume() == volume).toList();
        assertThat(damage).hasSize(1);
        long read = fixer.repair(damage.get(0));
        StripeMap after = fixer.cluster().stripeMap(volume);
        for (int i = 0; i < units.length; i++) {
            StripeMap.Block b = after.stripes().get(0).blocks().get(units[i]);
            assertThat(bytesOf(cluster, b)).as("rebuilt unit %d", units[i]).isEqualTo(before[i]);
        }
        return read;
    }

    private static byte[] bytesOf(TestCluster cluster, StripeMap.Block b) throws Exception {
        ByteBuffer buf = cluster.stores.get(b.store()).store().blocks().read(b.name(), 0, -1);
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }
}
