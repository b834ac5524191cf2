package io.hayloft.client.http;

import io.hayloft.cold.ClusterRpc;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The addresses of one service that several servers can answer (the directory's {@code host:port}s,
 * in order of preference), and which of them a call tries first and next. A call starts at the
 * address that answered last ({@link #preferred()}); when the {@link RetryPolicy} says a failure is
 * worth another address (nothing was sent, or the server broke off), the call goes on to the
 * {@link #after next} one, round the list; an address that answers becomes the preferred one for later
 * calls ({@link #answered}). A list of one address is a single server: "the next address" is that
 * same server again.
 *
 * <p>Every caller with several addresses of a service goes through one of these (the
 * {@code DirectoryClient}, the cold reads' directory calls): this is the one place that chooses an
 * address. Following a replicated directory's leader is one small addition here: a method
 * {@code leaderHint(String address)} that makes a "not leader, try X" answer's X the preferred address
 * (adding it when it is not in the list), plus a {@link RetryPolicy.Action} that moves to it at once.
 *
 * <p>Thread-safe: the list is immutable; the preferred index is an atomic shared by all calls.
 */
public final class AddressList implements ClusterRpc.Servers {
    private final List<String> addresses;
    private final AtomicInteger preferred = new AtomicInteger();

    private AddressList(List<String> addresses) {
        if (addresses == null || addresses.isEmpty()) {
            throw new IllegalArgumentException("at least one address is needed");
        }
        for (String a : addresses) {
            if (a == null || a.isBlank()) {
                throw new IllegalArgumentException("an address is missing in " + addresses);
            }
        }
        this.addresses = List.copyOf(addresses);
    }

    /** The addresses in order of preference ({@code host:port} or URL prefixes). */
    public static AddressList of(List<String> addresses) {
        return new AddressList(addresses);
    }

    /** A single server. */
    public static AddressList of(String address) {
        return new AddressList(List.of(address));
    }

    @Override
    public List<String> addresses() {
        return addresses;
    }

    public int size() {
        return addresses.size();
    }

    /** The address at index {@code i} (0 to {@link #size()} - 1). */
    public String get(int i) {
        return addresses.get(i);
    }

    /** The index a call starts at: the address that answered last (the first one at the start). */
    public int preferred() {
        return preferred.get();
    }

    /** The index tried after index {@code i}: the next one in the list, round to the first. */
    public int after(int i) {
        return (i + 1) % addresses.size();
    }

    /** The address at index {@code i} answered: later calls start there. */
    public void answered(int i) {
        if (preferred.get() != i) { // no write when nothing changes: every successful call of the list passes here
            preferred.set(i);
        }
    }

    @Override
    public String toString() {
        return addresses.toString();
    }
}
