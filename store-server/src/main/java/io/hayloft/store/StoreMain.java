package io.hayloft.store;

import io.hayloft.serverkit.config.ConfigLoader;

/**
 * A bare main for a store server process: {@code StoreMain [--config file.yaml] [key=value ...]}.
 * Prints {@code PORT <n>} on stdout once serving (tests that start a real process read it). The
 * {@code hayloft store} command is the user-facing entry point.
 */
public final class StoreMain {
    private StoreMain() {
    }

    public static void main(String[] args) throws Exception {
        StoreConfig cfg = ConfigLoader.fromArgs(args, StoreConfig.class).validate();
        StoreServer server = StoreServer.start(cfg);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        System.out.println("PORT " + server.port());
        System.out.flush();
        Thread.currentThread().join();
    }
}
