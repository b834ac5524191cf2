package io.hayloft.cli.raid;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** Usage errors exit 2 with a message; an unreachable directory exits 1 naming it. */
class RaidCommandTest {

    private static int run(StringWriter err, String... args) {
        var cl = Hayloft.commandLine();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(new StringWriter(), true));
        return cl.execute(args);
    }

    @Test
    void aBadVolumeIdIsAUsageError() {
        StringWriter err = new StringWriter();
        assertThat(run(err, "raid", "encode", "seven")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("seven");
    }

    @Test
    void anUnknownCodecIsAUsageError() {
        StringWriter err = new StringWriter();
        assertThat(run(err, "raid", "fsck", "--codec", "zz")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("unknown codec 'zz'");
    }

    @Test
    void serveRefusesAMissingPolicyFileAndAnUnknownKey() {
        StringWriter err = new StringWriter();
        assertThat(run(err, "raid", "serve", "--policy", "/nonexistent/raid-policy.json", "port=0")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("/nonexistent/raid-policy.json");
        err = new StringWriter();
        assertThat(run(err, "raid", "serve", "colour=blue")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("colour");
    }

    @Test
    void anUnreachableDirectoryFailsNamingIt() {
        StringWriter err = new StringWriter();
        assertThat(run(err, "raid", "status", "--directory", "127.0.0.1:1")).isEqualTo(Hayloft.EXIT_FAILED);
        assertThat(err.toString()).contains("127.0.0.1:1");
    }
}
