package io.hayloft.cli.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class StoreCommandTest {
    @TempDir
    Path dir;

    private int run(StringWriter err, String... args) {
        CommandLine cl = Hayloft.commandLine();
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void badConfigIsAUsageErrorThatNamesTheKey() throws Exception {
        StringWriter err = new StringWriter();
        assertThat(run(err, "store", "--data-dir", dir.toString(), "--set", "prot=1")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("'prot'");
        err = new StringWriter();
        assertThat(run(err, "store", "--data-dir", dir.toString(), "--set", "fsync=sometimes")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("sometimes");
        Path yaml = dir.resolve("s.yaml");
        Files.writeString(yaml, "volumeSizeLimit: 12\n");
        err = new StringWriter();
        assertThat(run(err, "store", "--config", yaml.toString())).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("volumeSizeLimit").contains("12");
    }

    @Test
    void helpListsTheConfigKeys() {
        StringWriter out = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setOut(new PrintWriter(out, true));
        assertThat(cl.execute("store", "--help")).isZero();
        assertThat(out.toString()).contains("volumeSizeLimit").contains("--data-dir");
    }
}
