package io.hayloft.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hayloft demo} as a user runs it, on fewer photos: every act prints its table, the final check
 * finds every photo intact, and the servers' logs went to the named file, not into the tables.
 */
class LifeCycleDemoTest {

    @TempDir
    Path tmp;

    @Test
    void theWholeLifeCycleOnFifteenStores() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Path log = tmp.resolve("demo.log");
        int exit = Hayloft.run(new PrintWriter(out), new PrintWriter(err), "demo", "--photos", "120", "--dir",
                tmp.resolve("work").toString(), "--log", log.toString());
        String text = out.toString();
        assertThat(exit).as(text + err).isZero();
        assertThat(err.toString()).as("stderr").doesNotContain("demo:");
        for (String act : new String[] {"1. Photos put hot", "2. Volumes sealed", "3. Raid-node encodes", "4. Storage",
                "5. Every photo read", "6. Data block 0", "7. store-", "8. ", "9. After the restart"}) {
            assertThat(text).contains(act);
        }
        assertThat(text).containsPattern("after: hh-xor\\+ \\(10,4\\) blocks\\s+[0-9.]+ MiB\\s+1\\.4[0-9]")
                .containsPattern("problems in all acts\\s+0\\n")
                .containsPattern("stores restored by the operator\\s+1\\n")
                .containsPattern("wrong cookies answered as missing\\s+50 of 50")
                .containsPattern("hh-xor\\+ repair \\(measured\\)\\s+\\d+\\s+0\\.6[0-9]")
                .containsPattern("\\d+ -> \\d+\\s")
                .contains("Every acknowledged, undeleted photo is intact.")
                .doesNotContain("INFO", "WARN", "embedded store");
        assertThat(Files.readString(log)).contains("embedded store");
    }
}
