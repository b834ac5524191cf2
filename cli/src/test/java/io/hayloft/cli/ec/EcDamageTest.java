package io.hayloft.cli.ec;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.CodecKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Corrupted, truncated and deleted block files: verify finds them, repair fixes them, decode refuses past r. */
class EcDamageTest {

    private static final int BLOCK = 8192;
    private static final int LENGTH = 2 * 10 * BLOCK + 4321; // three stripes, the last one short

    @TempDir
    Path tmp;

    private Path encode(CodecKind codec, String name) throws IOException {
        Path in = tmp.resolve("in.bin");
        if (!Files.exists(in)) {
            Cli.randomFile(in, LENGTH, 42);
        }
        Path dir = tmp.resolve(name);
        Cli.Outcome enc = Cli.run("ec", "encode", "--codec", codec.wireName(), "--block-size", BLOCK, in, dir);
        assertThat(enc.exit()).as(enc.toString()).isZero();
        return dir;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(CodecKind.class)
    void corruptBlockIsReportedAndRepairedByteForByte(CodecKind codec) throws IOException {
        Path dir = encode(codec, "blocks");
        Random rnd = new Random(codec.ordinal() * 31L + 5);
        String data = StripeLayout.name(10, 1, 3);
        String parity = StripeLayout.name(10, 0, 12);
        byte[] dataBefore = Files.readAllBytes(dir.resolve(data));
        byte[] parityBefore = Files.readAllBytes(dir.resolve(parity));
        Cli.corrupt(dir.resolve(data), 3, rnd);
        Cli.corrupt(dir.resolve(parity), 1, rnd);

        Cli.Outcome ver = Cli.run("ec", "verify", dir);
        assertThat(ver.exit()).as(ver.toString()).isEqualTo(1);
        assertThat(ver.out()).contains("DAMAGED " + data + ": CRC mismatch", "DAMAGED " + parity + ": CRC mismatch",
                "2 of ", "run 'hayloft ec repair");

        Cli.Outcome rep = Cli.run("ec", "repair", dir);
        assertThat(rep.exit()).as(rep.toString()).isZero();
        assertThat(rep.out()).contains("rebuilt " + data + ": CRC mismatch", "rebuilt " + parity + ": CRC mismatch",
                "2 of 2 damaged blocks rebuilt");
        assertThat(Files.readAllBytes(dir.resolve(data))).isEqualTo(dataBefore);
        assertThat(Files.readAllBytes(dir.resolve(parity))).isEqualTo(parityBefore);
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
        }

        Cli.Outcome again = Cli.run("ec", "verify", dir);
        assertThat(again.exit()).as(again.toString()).isZero();
        Cli.Outcome nothing = Cli.run("ec", "repair", dir);
        assertThat(nothing.exit()).isZero();
        assertThat(nothing.out()).contains("nothing to do");
    }

    @Test
    void truncatedAndShortLastBlocksAreFound() throws IOException {
        Path dir = encode(CodecKind.HH_XOR_PLUS, "blocks");
        String last = StripeLayout.name(10, 2, 0); // the file's last data block: 4321 bytes
        assertThat(Files.size(dir.resolve(last))).isEqualTo(4321);
        String truncated = StripeLayout.name(10, 0, 9);
        Files.write(dir.resolve(truncated), new byte[100]);
        Files.delete(dir.resolve(last));

        Cli.Outcome ver = Cli.run("ec", "verify", "--crc-only", dir);
        assertThat(ver.exit()).isEqualTo(1);
        assertThat(ver.out()).contains("DAMAGED " + truncated + ": wrong size (100 bytes, expected 8192)",
                "DAMAGED " + last + ": missing");

        Path out = tmp.resolve("out.bin");
        Cli.Outcome dec = Cli.run("ec", "decode", dir, out);
        assertThat(dec.exit()).as(dec.toString()).isZero();
        assertThat(dec.out()).contains("rebuilt from parity", truncated, last);
        assertThat(Files.readAllBytes(out)).isEqualTo(Files.readAllBytes(tmp.resolve("in.bin")));

        assertThat(Cli.run("ec", "repair", dir).exit()).isZero();
        assertThat(Files.size(dir.resolve(last))).isEqualTo(4321);
        assertThat(Cli.run("ec", "verify", dir).exit()).isZero();
    }

    @Test
    void parityThatDisagreesWithItsDataIsFoundEvenWhenItsCrcMatches() throws IOException {
        Path dir = encode(CodecKind.RS, "blocks");
        String parity = StripeLayout.name(10, 1, 11);
        Cli.corrupt(dir.resolve(parity), 1, new Random(3));
        // Record the bad block's CRC in the manifest, as a buggy encoder would have.
        int crc = BlockScanner.crc32c(dir.resolve(parity));
        Path manifest = dir.resolve(Manifest.FILE_NAME);
        String json = Files.readString(manifest);
        String oldCrc = Manifest.read(dir).block(1, 11).crcHex();
        Files.writeString(manifest, json.replace("\"" + oldCrc + "\"", "\"" + Manifest.hex(crc) + "\""));

        Cli.Outcome crcOnly = Cli.run("ec", "verify", "--crc-only", dir);
        assertThat(crcOnly.exit()).isZero();
        Cli.Outcome ver = Cli.run("ec", "verify", dir);
        assertThat(ver.exit()).as(ver.toString()).isEqualTo(1);
        assertThat(ver.out()).contains("DAMAGED " + parity + ": parity mismatch");
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(CodecKind.class)
    void moreThanRLostBlocksIsRefusedNamingTheStripe(CodecKind codec) throws IOException {
        Path dir = encode(codec, "blocks");
        for (int u : new int[] {0, 4, 9, 10}) {
            Files.delete(dir.resolve(StripeLayout.name(10, 1, u)));
        }
        Cli.corrupt(dir.resolve(StripeLayout.name(10, 1, 13)), 2, new Random(1));
        Path out = tmp.resolve("out.bin");

        Cli.Outcome dec = Cli.run("ec", "decode", dir, out);
        assertThat(dec.exit()).as(dec.toString()).isEqualTo(1);
        assertThat(dec.err()).contains("cannot decode: stripe 1 has 5 of 14 blocks missing or damaged",
                "s000001-d00.blk missing", "s000001-p03.blk CRC mismatch", "at most 4");
        assertThat(out).doesNotExist();
        assertThat(tmp.resolve("out.bin.hayloft-tmp")).doesNotExist();

        Cli.Outcome ver = Cli.run("ec", "verify", dir);
        assertThat(ver.exit()).isEqualTo(1);
        assertThat(ver.out()).contains("stripe 1: 5 damaged blocks, NOT recoverable");

        Cli.Outcome rep = Cli.run("ec", "repair", dir);
        assertThat(rep.exit()).isEqualTo(1);
        assertThat(rep.err()).contains("stripe 1 cannot be rebuilt: 5 of 14 blocks are damaged");
    }

    @Test
    void missingBlocksOverTheLimitAreRefusedBeforeWritingAnything() throws IOException {
        Path dir = encode(CodecKind.HH_NONXOR, "blocks");
        for (int u = 0; u < 5; u++) {
            Files.delete(dir.resolve(StripeLayout.name(10, 0, u)));
        }
        Path out = tmp.resolve("out.bin");
        Cli.Outcome dec = Cli.run("ec", "decode", dir, out);
        assertThat(dec.exit()).isEqualTo(1);
        assertThat(dec.err()).contains("stripe 0 has 5 of 14 blocks missing");
        assertThat(out).doesNotExist();
    }

    @Test
    void hitchhikerRepairReadsLessThanReedSolomon() throws IOException {
        Path rs = encode(CodecKind.RS, "rs");
        Path hh = encode(CodecKind.HH_XOR_PLUS, "hh");
        String lost = StripeLayout.name(10, 0, 2);
        Files.delete(rs.resolve(lost));
        Files.delete(hh.resolve(lost));

        long rsRead = bytesRead(Cli.run("ec", "repair", rs), lost);
        long hhRead = bytesRead(Cli.run("ec", "repair", hh), lost);
        assertThat(rsRead).isEqualTo(10L * BLOCK);
        // docs/erasure.md: 13 half-units of 20 at (10,4) for HH-XOR+.
        assertThat(hhRead).isEqualTo(13L * BLOCK / 2);
        assertThat(hhRead).isLessThan(rsRead);
    }

    private static long bytesRead(Cli.Outcome rep, String block) {
        assertThat(rep.exit()).as(rep.toString()).isZero();
        Matcher m = Pattern.compile("rebuilt " + Pattern.quote(block) + ": missing: read (\\d+) bytes .*RS would read "
                + (10L * BLOCK) + " bytes").matcher(rep.out());
        assertThat(m.find()).as(rep.out()).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void severalLostBlocksOfOneStripeAreRebuiltTogether() throws IOException {
        Path dir = encode(CodecKind.HH_XOR, "blocks");
        Files.delete(dir.resolve(StripeLayout.name(10, 0, 1)));
        Files.delete(dir.resolve(StripeLayout.name(10, 0, 12)));
        Files.write(dir.resolve(StripeLayout.name(10, 0, 5)), "junk".getBytes(StandardCharsets.UTF_8));
        Cli.Outcome rep = Cli.run("ec", "repair", dir);
        assertThat(rep.exit()).as(rep.toString()).isZero();
        assertThat(rep.out()).contains("decoded together with the stripe's other 2 lost blocks", "3 of 3");
        assertThat(Cli.run("ec", "verify", dir).exit()).isZero();
    }

    @Test
    void aRebuiltBlockThatDisagreesWithTheManifestIsNotInstalled() throws IOException {
        Path dir = encode(CodecKind.HH_XOR_PLUS, "blocks");
        String lost = StripeLayout.name(10, 0, 4);
        Files.delete(dir.resolve(lost));
        // The manifest now expects other bytes than the helpers can produce (as if a helper were silently bad).
        Path manifest = dir.resolve(Manifest.FILE_NAME);
        String crc = Manifest.read(dir).block(0, 4).crcHex();
        String other = crc.equals("00000000") ? "00000001" : "00000000";
        Files.writeString(manifest, Files.readString(manifest).replace("\"" + crc + "\"", "\"" + other + "\""));

        Cli.Outcome rep = Cli.run("ec", "repair", dir);
        assertThat(rep.exit()).as(rep.toString()).isEqualTo(1);
        assertThat(rep.err()).contains("stripe 0", "the manifest says " + other, "nothing was replaced");
        assertThat(dir.resolve(lost)).doesNotExist();
        assertThat(dir.resolve(lost + ".repair.tmp")).doesNotExist();
    }
}
