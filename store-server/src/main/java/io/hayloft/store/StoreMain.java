package io.hayloft.store;

import io.hayloft.common.config.ConfigLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A bare main for a store server process: {@code StoreMain [--config file.yaml] [key=value ...]}.
 * Prints {@code PORT <n>} on stdout once serving (tests that start a real process read it). The
 * {@code hayloft store} command is the user-facing entry point.
 */
public final class StoreMain {
    private StoreMain() {
    }

    public static void main(String[] args) throws Exception {
        Path config = null;
        List<String> overrides = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if ("--config".equals(args[i]) && i + 1 < args.length) {
                config = Path.of(args[++i]);
            } else {
                overrides.add(args[i]);
            }
        }
        StoreConfig cfg = ConfigLoader.load(config, overrides, StoreConfig.class).validate();
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
