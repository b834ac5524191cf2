package io.hayloft.bench;

import java.io.IOException;

/** What the benchmarks ask of the machine they run on. Stateless. */
public final class Machine {
    private Machine() {
    }

    /**
     * {@code sync(1)}: every dirty page of the machine written back, so that a scenario does not pay
     * for the writeback of the one before. Best effort: a machine without {@code sync} is left as it is.
     */
    public static void sync() throws InterruptedException {
        try {
            Process p = new ProcessBuilder("sync").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            p.waitFor();
        } catch (IOException e) {
            // no sync here: the run goes on with the page cache as it is
        }
    }
}
