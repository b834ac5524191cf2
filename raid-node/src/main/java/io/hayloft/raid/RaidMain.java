package io.hayloft.raid;

import io.hayloft.serverkit.config.ConfigLoader;

/**
 * A bare main for a raid-node process: {@code RaidMain [--config file] [key=value ...]}, keys of
 * {@link RaidServerConfig}. Prints {@code PORT <n>} on stdout once serving, and
 * {@code CHECKPOINT <step>} at each encode and repair step. The {@code hayloft raid serve} command
 * is the user-facing entry point.
 *
 * <p>Crash tests only: with {@code -Dhayloft.raid.haltAt=STEP} the process halts
 * ({@code Runtime.halt(137)}: no shutdown hooks, no cleanup, as {@code kill -9}) when it reaches
 * {@code STEP}.
 */
public final class RaidMain {
    /** Exit status of a halt at a checkpoint, as a process killed by SIGKILL reports. */
    public static final int HALT_STATUS = 137;

    private RaidMain() {
    }

    public static void main(String[] args) throws Exception {
        RaidServerConfig cfg = ConfigLoader.fromArgs(args, RaidServerConfig.class).validate();
        RaidServer server = RaidServer.start(cfg, checkpoints(System.getProperty("hayloft.raid.haltAt")));
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        System.out.println("PORT " + server.port());
        System.out.flush();
        Thread.currentThread().join();
    }

    /** Prints each step; halts the process at {@code haltAt} when it is not null. */
    public static Checkpoints checkpoints(String haltAt) {
        return step -> {
            System.out.println("CHECKPOINT " + step);
            System.out.flush();
            if (step.equals(haltAt)) {
                Runtime.getRuntime().halt(HALT_STATUS);
            }
        };
    }
}
