package io.hayloft.client;

/**
 * The cause of a {@link RemoteException} whose answer was a directory replica's "not the leader,
 * ask X" (421 {@code NOT_LEADER} with the leader's {@code host:port} in its error body's
 * {@code leader} field or the {@code X-Hayloft-Leader} header): it carries X, which
 * {@link RemoteException#leader()} gives and the HTTP layer's retry policy follows. It is never
 * thrown on its own.
 *
 * <p>Immutable, hence thread-safe.
 */
public final class LeaderHint extends HayloftException {
    private static final long serialVersionUID = 1L;
    private final String leader;

    /** @param leader the leader's HTTP address, {@code host:port} */
    public LeaderHint(String leader) {
        super("the answering replica names " + leader + " as the leader");
        this.leader = leader;
    }

    /** The leader's HTTP address, {@code host:port}. */
    public String leader() {
        return leader;
    }
}
