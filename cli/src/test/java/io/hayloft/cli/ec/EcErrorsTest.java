package io.hayloft.cli.ec;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input gets exit 2 and a message that names the problem; nothing half-written is left behind. */
class EcErrorsTest {

    @TempDir
    Path tmp;

    private Path in;
    private Path dir;

    @BeforeEach
    void encodeOne() throws IOException {
        in = tmp.resolve("in.bin");
        Cli.randomFile(in, 50_000, 1);
        dir = tmp.resolve("blocks");
        assertThat(Cli.run("ec", "encode", "--codec", "hh-xor+", "--block-size", "4k", in, dir).exit()).isZero();
    }

    private static void assertUsage(Cli.Outcome o, String... messages) {
        assertThat(o.exit()).as(o.toString()).isEqualTo(2);
        assertThat(o.err()).as(o.toString()).contains(messages);
    }

    @Test
    void missingInputFile() {
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", tmp.resolve("nope.bin"), tmp.resolve("d")),
                "nope.bin", "no such file");
        assertThat(tmp.resolve("d")).doesNotExist();
    }

    @Test
    void unknownCodecOption() {
        assertUsage(Cli.run("ec", "encode", "--codec", "lrc", in, tmp.resolve("d")),
                "unknown codec 'lrc'", "rs, hh-xor, hh-xor+, hh-nonxor");
    }

    @Test
    void badSizesAndParameters() {
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", "--block-size", "12q", in, tmp.resolve("d")),
                "invalid size '12q'");
        assertUsage(Cli.run("ec", "encode", "--codec", "hh-xor", "--block-size", "4097", in, tmp.resolve("d")),
                "block size 4097 is odd", "must be even");
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", "--block-size", "0", in, tmp.resolve("d")),
                "block size must be positive, got 0");
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", "--k", "250", "--r", "10", in, tmp.resolve("d")),
                "k + r must be at most 256");
        assertUsage(Cli.run("ec", "encode", "--codec", "hh-xor", "--r", "1", in, tmp.resolve("d")), "needs r >= 2");
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", "--k", "ten", in, tmp.resolve("d")), "ten");
    }

    @Test
    void encodeRefusesADirectoryThatHoldsAnEncoding() {
        assertUsage(Cli.run("ec", "encode", "--codec", "rs", in, dir), "already holds an encoding");
    }

    @Test
    void missingManifest() throws IOException {
        Path empty = Files.createDirectory(tmp.resolve("empty"));
        assertUsage(Cli.run("ec", "verify", empty), "manifest.json", "no manifest");
        assertUsage(Cli.run("ec", "repair", empty), "no manifest");
        assertUsage(Cli.run("ec", "decode", empty, tmp.resolve("o")), "no manifest");
        assertUsage(Cli.run("ec", "verify", tmp.resolve("nowhere")), "no such directory");
    }

    @Test
    void truncatedManifest() throws IOException {
        Path m = dir.resolve(Manifest.FILE_NAME);
        byte[] json = Files.readAllBytes(m);
        Files.write(m, Arrays.copyOf(json, json.length / 2));
        assertUsage(Cli.run("ec", "verify", dir), "corrupt manifest: not valid JSON");
        assertUsage(Cli.run("ec", "decode", dir, tmp.resolve("o")), "corrupt manifest");
        assertThat(tmp.resolve("o")).doesNotExist();
    }

    @Test
    void manifestWithUnknownVersionOrCodecOrBadFields() throws IOException {
        Path m = dir.resolve(Manifest.FILE_NAME);
        String json = Files.readString(m);
        Files.writeString(m, json.replace("\"version\" : 1", "\"version\" : 7"));
        assertUsage(Cli.run("ec", "verify", dir), "unsupported manifest version 7", "reads version 1");

        Files.writeString(m, json.replace("\"codec\" : \"hh-xor+\"", "\"codec\" : \"hh-magic\""));
        assertUsage(Cli.run("ec", "repair", dir), "unknown codec 'hh-magic'");

        Files.writeString(m, json.replace("\"file\" : \"s000000-d00.blk\"", "\"file\" : \"../../etc/passwd\""));
        assertUsage(Cli.run("ec", "decode", dir, tmp.resolve("o")), "corrupt manifest",
                "'../../etc/passwd' should be named 's000000-d00.blk'");

        Files.writeString(m, json.replace("\"length\" : 50000", "\"length\" : 90000"));
        assertUsage(Cli.run("ec", "verify", dir), "corrupt manifest");

        Files.writeString(m, json.replace("\"k\" : 10,", ""));
        assertUsage(Cli.run("ec", "verify", dir), "missing integer field 'k'");
    }

    @Test
    void decodeIntoAMissingDirectoryOrOntoADirectory() {
        assertUsage(Cli.run("ec", "decode", dir, tmp.resolve("no/such/out.bin")), "no such directory");
        assertUsage(Cli.run("ec", "decode", dir, tmp), "is a directory");
    }

    @Test
    void decodeDoesNotOverwriteWithoutForce() throws IOException {
        Path out = tmp.resolve("out.bin");
        Files.writeString(out, "precious");
        assertUsage(Cli.run("ec", "decode", dir, out), "already exists", "--force");
        assertThat(Files.readString(out)).isEqualTo("precious");
        assertThat(Cli.run("ec", "decode", "--force", dir, out).exit()).isZero();
        assertThat(Files.readAllBytes(out)).isEqualTo(Files.readAllBytes(in));
    }

    @Test
    void progressBarWhenAskedFor() {
        Cli.Outcome o = Cli.run("ec", "verify", "--progress", dir);
        assertThat(o.exit()).isZero();
        assertThat(o.err()).contains("\rverify [", "100%");
        Cli.Outcome quiet = Cli.run("ec", "verify", dir);
        assertThat(quiet.err()).doesNotContain("\r");
    }

    @Test
    void infoNamesTheBackend() {
        Cli.Outcome o = Cli.run("ec", "info");
        assertThat(o.exit()).isZero();
        assertThat(o.out()).containsPattern("(?m)^backend: \\S+").contains("requested: ");
    }
}
