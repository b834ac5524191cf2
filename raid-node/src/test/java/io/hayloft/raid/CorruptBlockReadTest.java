package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Blocks corrupt in place (still listed with their old CRC, wrong bytes on disk, as bit rot leaves
 * them before a scrub finds it): every needle still reads back correct, including needles that cross
 * into or out of the corrupt block, and needles rebuilt while a corrupt parity block is among the
 * sources.
 */
class CorruptBlockReadTest extends ClusterFixture {

    static final long BLOCK = 16 << 10;


    @Test
    void zeroedDataBlockThenZeroedParityWithADataStoreDown() throws Exception {
        cluster = new TestCluster(dir, 15);
        int volume = cluster.writeVolume(150, 4000);
        runner = new ThreadPoolRunner(2);
        RaidNode raid = new RaidNode(cluster.raidConfig("hh-xor+", BLOCK), runner);
        raid.encode(volume);
        StripeMap map = raid.cluster().stripeMap(volume);
        StripeMap.Stripe s0 = map.stripes().get(0);

        zero(s0.blocks().get(5));
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(reader, List.of(), "");
            assertThat(reader.degradedReads()).as("needles of unit 5 were rebuilt").isPositive();
        }

        // Now a parity block is corrupt too, and the store of data unit 2 is down: a needle of unit 2
        // is rebuilt from sources that include the bad parity (and, when it crosses, bad unit 5),
        // fails its CRC, and is rebuilt again leaving the bad blocks out.
        zero(s0.blocks().get(map.k()));
        cluster.stopStore(s0.blocks().get(2).store()); // the reader uses another index holder if it was one
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(reader, List.of(), "");
        }
    }

    /**
     * A needle spanning more blocks than the code has parity (here 3 or 4 blocks of 16 KiB under a
     * (4, 2) code) over one corrupt block: leaving out all of its blocks at once is impossible, so the
     * reader must try leaving out each one (found by the life-cycle checker, seed 1002 step 90: a
     * 253 KiB needle over 128 KiB blocks).
     */
    @Test
    void aNeedleSpanningMoreBlocksThanParityOverOneCorruptBlock() throws Exception {
        cluster = new TestCluster(dir, 8);
        int volume = cluster.writeVolume(6, 60_000);
        runner = new ThreadPoolRunner(2);
        RaidConfig config = cluster.raidConfig("rs", BLOCK);
        config.k = 4;
        config.r = 2;
        RaidNode raid = new RaidNode(config, runner);
        raid.encode(volume);
        StripeMap map = raid.cluster().stripeMap(volume);
        zero(map.stripes().get(0).blocks().get(1));
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(reader, List.of(), "with data unit 1 of stripe 0 zeroed");
            assertThat(reader.degradedReads()).isPositive();
        }
    }

    /** Overwrites a block file with zeros on its store's disk, behind the store's back. */
    private void zero(StripeMap.Block b) throws Exception {
        Path file;
        try (Stream<Path> s = Files.walk(cluster.dir.resolve(b.store()))) {
            file = s.filter(p -> p.getFileName().toString().equals(b.name() + ".blk")).findFirst().orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            assertThat(f.length()).isEqualTo(BLOCK); // raw bytes, no header (docs/formats.md)
            f.write(new byte[(int) BLOCK]);
            f.getFD().sync();
        }
    }
}
