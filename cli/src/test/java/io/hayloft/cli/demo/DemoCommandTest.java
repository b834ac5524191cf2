package io.hayloft.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo end to end on a small file: the table shows HH-XOR+ reading 65% of RS and both decodes verified. */
class DemoCommandTest {

    @TempDir
    Path tmp;

    @Test
    void smallDemoPrintsTheTable() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Hayloft.run(new PrintWriter(out), new PrintWriter(err), "demo", "--size", "1m", "--block-size",
                "64k", "--lose", "9", "--repeat", "1", "--quick", "--dir", tmp.toString());
        String text = out.toString();
        assertThat(exit).as(text + err).isZero();
        assertThat(text).containsPattern("repair: bytes read\\s+655360\\s+425984\\s+0\\.65")
                .containsPattern("decode verified\\s+yes\\s+yes")
                .contains("encode throughput (MiB/s)", "rs", "hh-xor+", "hh/rs");
        assertThat(tmp.resolve("rs").resolve("manifest.json")).exists();
        assertThat(Files.exists(tmp.resolve("rs.decoded"))).isFalse();
    }

    @Test
    void rejectsALostBlockPastTheEnd() {
        StringWriter err = new StringWriter();
        int exit = Hayloft.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "demo", "--size", "100k",
                "--block-size", "64k", "--lose", "5", "--quick");
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("past the end");
    }
}
