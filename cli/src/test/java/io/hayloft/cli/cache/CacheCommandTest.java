package io.hayloft.cli.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CacheCommandTest {
    private static int run(StringWriter err, String... args) {
        CommandLine cl = Hayloft.commandLine();
        cl.setErr(new PrintWriter(err, true));
        return cl.execute(args);
    }

    @Test
    void badConfigurationIsAUsageErrorNamingTheValue() {
        StringWriter err = new StringWriter();
        assertThat(run(err, "cache", "role=tertiary")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err.toString()).contains("role must be primary or gutter, was tertiary");
        StringWriter err2 = new StringWriter();
        assertThat(run(err2, "cache", "maxByte=1")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err2.toString()).contains("unknown config key 'maxByte'");
        StringWriter err3 = new StringWriter();
        assertThat(run(err3, "cache", "--config", "/nonexistent/cache.yaml")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err3.toString()).contains("config file not found: /nonexistent/cache.yaml");
        StringWriter err4 = new StringWriter(); // the TLS keys are known; a missing keystore is named
        assertThat(run(err4, "cache", "tlsKeyStore=/nonexistent/cache.p12", "tlsKeyStorePassword=hidden-pw")).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(err4.toString()).contains("tlsKeyStore /nonexistent/cache.p12: no such file").doesNotContain("hidden-pw");
    }

    @Test
    void helpListsTheCommand() {
        StringWriter out = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setOut(new PrintWriter(out, true));
        assertThat(cl.execute("cache", "--help")).isZero();
        assertThat(out.toString()).contains("--gutter", "read-through photo cache");
    }
}
