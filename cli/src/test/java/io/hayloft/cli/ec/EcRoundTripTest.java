package io.hayloft.cli.ec;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.CodecKind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** encode / verify / decode on real files for every codec, then 1..r lost blocks of a stripe. */
class EcRoundTripTest {

    @TempDir
    Path tmp;

    static Stream<Arguments> lengths() {
        List<Arguments> list = new ArrayList<>();
        for (CodecKind c : CodecKind.values()) {
            list.add(Arguments.of(c, 0, 4096));              // empty file
            list.add(Arguments.of(c, 1, 4096));              // one byte
            list.add(Arguments.of(c, 12_345, 4096));         // shorter than one stripe, odd
            list.add(Arguments.of(c, 10 * 4096, 4096));      // exactly one stripe
            list.add(Arguments.of(c, 2 * 10 * 4096 + 777, 4096)); // three stripes, last one short
            list.add(Arguments.of(c, 700_001, 64 * 1024));   // 64 KiB blocks, odd length, two stripes
        }
        return list.stream();
    }

    @ParameterizedTest(name = "{0} length {1} block {2}")
    @MethodSource("lengths")
    void encodeVerifyDecodeIsBitForBit(CodecKind codec, int length, int blockSize) throws IOException {
        byte[] original = Cli.randomFile(tmp.resolve("in.bin"), length, length);
        Path dir = tmp.resolve("blocks");

        Cli.Outcome enc = Cli.run("ec", "encode", "--codec", codec.wireName(), "--k", 10, "--r", 4,
                "--block-size", blockSize, tmp.resolve("in.bin"), dir);
        assertThat(enc.exit()).as(enc.toString()).isZero();

        Manifest m = Manifest.read(dir);
        assertThat(m.codec()).isEqualTo(codec);
        long block = EcEncoder.effectiveBlockSize(codec, blockSize, length);
        assertThat(m.layout().blockSize()).isEqualTo(block);
        assertThat(m.layout().length()).isEqualTo(length);
        long stripes = (length + 10L * block - 1) / (10L * block);
        assertThat(m.layout().stripes()).isEqualTo(stripes);
        long dataBytes = 0;
        for (Manifest.Block b : m.blocks()) {
            assertThat(Files.size(dir.resolve(b.file()))).isEqualTo(b.length());
            if (b.data()) {
                dataBytes += b.length();
            } else {
                assertThat(b.length()).isEqualTo(block);
            }
        }
        assertThat(dataBytes).as("data blocks hold exactly the file, padding is logical").isEqualTo(length);
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.filter(p -> p.toString().endsWith(".blk")).count()).isEqualTo(m.blocks().size());
        }

        Cli.Outcome ver = Cli.run("ec", "verify", dir);
        assertThat(ver.exit()).as(ver.toString()).isZero();
        assertThat(ver.out()).contains("all " + m.blocks().size() + " blocks intact (CRC32C and parity)");

        Path out = tmp.resolve("out.bin");
        Cli.Outcome dec = Cli.run("ec", "decode", dir, out);
        assertThat(dec.exit()).as(dec.toString()).isZero();
        assertThat(Files.readAllBytes(out)).isEqualTo(original);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(CodecKind.class)
    void aFileSmallerThanOneBlockGetsSmallBlocks(CodecKind codec) throws IOException {
        byte[] original = Cli.randomFile(tmp.resolve("in.bin"), 999, 3);
        Path dir = tmp.resolve("blocks");
        Cli.Outcome enc = Cli.run("ec", "encode", "--codec", codec.wireName(), "--block-size", "256m",
                tmp.resolve("in.bin"), dir);
        assertThat(enc.exit()).as(enc.toString()).isZero();
        long block = codec.isHitchhiker() ? 1000 : 999;
        assertThat(enc.out()).contains("block size is " + block + " bytes instead of 268435456");
        assertThat(Files.size(dir.resolve("s000000-p03.blk"))).isEqualTo(block);
        assertThat(Files.size(dir.resolve("s000000-d00.blk"))).isEqualTo(999);
        Files.delete(dir.resolve("s000000-d00.blk"));
        Cli.Outcome dec = Cli.run("ec", "decode", dir, tmp.resolve("out.bin"));
        assertThat(dec.exit()).as(dec.toString()).isZero();
        assertThat(Files.readAllBytes(tmp.resolve("out.bin"))).isEqualTo(original);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(CodecKind.class)
    void decodesWithUpToRBlocksOfAStripeDeleted(CodecKind codec) throws IOException {
        int length = 2 * 10 * 2048 + 999; // three stripes of 2 KiB blocks
        byte[] original = Cli.randomFile(tmp.resolve("in.bin"), length, 7);
        Random rnd = new Random(codec.ordinal());
        for (int lost = 1; lost <= 4; lost++) {
            Path dir = tmp.resolve("blocks-" + lost);
            assertThat(Cli.run("ec", "encode", "--codec", codec.wireName(), "--block-size", "2k",
                    tmp.resolve("in.bin"), dir).exit()).isZero();
            long stripe = rnd.nextInt(2); // a full stripe
            List<Integer> units = new ArrayList<>();
            for (int u = 0; u < 14; u++) {
                units.add(u);
            }
            Collections.shuffle(units, rnd);
            List<String> deleted = new ArrayList<>();
            for (int u : units.subList(0, lost)) {
                String name = StripeLayout.name(10, stripe, u);
                Files.delete(dir.resolve(name));
                deleted.add(name);
            }
            // and one missing block in another stripe, which is rebuilt independently
            Files.delete(dir.resolve(StripeLayout.name(10, 2, 0)));

            Path out = tmp.resolve("out-" + lost + ".bin");
            Cli.Outcome dec = Cli.run("ec", "decode", dir, out);
            assertThat(dec.exit()).as("lost " + deleted + "\n" + dec).isZero();
            assertThat(Files.readAllBytes(out)).as("lost " + deleted).isEqualTo(original);

            Cli.Outcome rep = Cli.run("ec", "repair", dir);
            assertThat(rep.exit()).as(rep.toString()).isZero();
            for (String name : deleted) {
                assertThat(rep.out()).contains("rebuilt " + name + ": missing");
            }
            Cli.Outcome ver = Cli.run("ec", "verify", dir);
            assertThat(ver.exit()).as(ver.toString()).isZero();
        }
    }
}
