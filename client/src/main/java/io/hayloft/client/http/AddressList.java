package io.hayloft.client.http;

import io.hayloft.cold.ClusterRpc;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The addresses of one service that several servers can answer (the directory's {@code host:port}s,
 * in order of preference), and which of them a call tries first and next. A call starts at the
 * address that answered last ({@link #preferred()}); when the {@link RetryPolicy} says a failure is
 * worth another address (nothing was sent, or the server broke off), the call goes on to the
 * {@link #after next} one, round the list; an address that answers becomes the preferred one for later
 * calls ({@link #answered}). A list of one address is a single server: "the next address" is that
 * same server again.
 *
 * <p>A replicated directory's follower answers a change with "not the leader, the leader is X"
 * (421 {@code NOT_LEADER}): {@link #leaderHint} makes X the preferred address, adding it to the list
 * when it is not there (a replica the configuration does not name, e.g. one added to the group later:
 * at most {@value #MAX_LEARNED} such learned addresses are kept, a new one taking the slot of the
 * oldest), and the policy's {@link RetryPolicy.Action#FOLLOW_LEADER} moves the call there at once.
 * Indices stay valid for the life of the list: learned addresses are appended after the configured
 * ones, and a slot, once made, always holds some address.
 *
 * <p>Every caller with several addresses of a service goes through one of these (the
 * {@code DirectoryClient}, the cold reads' and the raid-node's directory calls): this is the one place
 * that chooses an address.
 *
 * <p>Thread-safe: the configured addresses are immutable; the learned ones are an immutable
 * snapshot replaced atomically; the preferred index is an atomic shared by all calls.
 */
public final class AddressList implements ClusterRpc.Servers {
    /** How many addresses learned from leader hints are kept beside the configured ones. */
    public static final int MAX_LEARNED = 8;

    private final List<String> addresses;
    /** The configured addresses, then the learned ones (an immutable snapshot). */
    private final AtomicReference<List<String>> all;
    private final AtomicInteger preferred = new AtomicInteger();
    private final AtomicInteger learnedCount = new AtomicInteger();

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
        this.all = new AtomicReference<>(this.addresses);
    }

    /** The addresses in order of preference ({@code host:port} or URL prefixes). */
    public static AddressList of(List<String> addresses) {
        return new AddressList(addresses);
    }

    /** A single server. */
    public static AddressList of(String address) {
        return new AddressList(List.of(address));
    }

    /**
     * Parses a configuration's list of addresses: {@code h1:p1,h2:p2,h3:p3} (blanks around the commas
     * ignored; one address is a list of one).
     *
     * @param key the configuration key or option, named in the error
     * @throws IllegalArgumentException naming {@code key} and the entry that is not {@code host:port}
     */
    public static List<String> parse(String key, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(key + " must name at least one host:port, was '" + (value == null ? "" : value) + "'");
        }
        List<String> out = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String a = part.trim();
            String why = hostPortProblem(a);
            if (why != null) {
                throw new IllegalArgumentException(key + ": entry '" + a + "' of '" + value.trim() + "' is not host:port (" + why
                        + "); give a comma-separated list such as h1:7000,h2:7000,h3:7000");
            }
            out.add(a);
        }
        return List.copyOf(out);
    }

    /** Why {@code a} is not a {@code host:port}, or null when it is one. */
    static String hostPortProblem(String a) {
        if (a.isEmpty()) {
            return "empty";
        }
        int colon = a.lastIndexOf(':');
        if (colon <= 0) {
            return "no port";
        }
        String host = a.substring(0, colon);
        String port = a.substring(colon + 1);
        if (host.contains("/") || host.contains(" ") || host.contains("@")) {
            return "bad host '" + host + "'";
        }
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(Character::isDigit)) {
            return "bad port '" + port + "'";
        }
        int p = Integer.parseInt(port);
        return p >= 1 && p <= 65535 ? null : "port " + p + " not in 1..65535";
    }

    /** The configured addresses, in order of preference. */
    @Override
    public List<String> addresses() {
        return addresses;
    }

    /** The configured addresses and then those learned from leader hints (a snapshot). */
    public List<String> all() {
        return all.get();
    }

    /** The number of addresses, learned ones included (never shrinks). */
    public int size() {
        return all.get().size();
    }

    /** The address at index {@code i} (0 to {@link #size()} - 1). */
    public String get(int i) {
        return all.get().get(i);
    }

    /** The index a call starts at: the address that answered last (the first one at the start). */
    public int preferred() {
        return preferred.get();
    }

    /** The index tried after index {@code i}: the next one in the list, round to the first. */
    public int after(int i) {
        return (i + 1) % size();
    }

    /** The address at index {@code i} answered: later calls start there. */
    public void answered(int i) {
        if (preferred.get() != i) { // no write when nothing changes: every successful call of the list passes here
            preferred.set(i);
        }
    }

    /**
     * A replica said the service's leader is {@code address} ({@code host:port}): it becomes the
     * preferred address, added to the list when it is not in it.
     *
     * @return its index, or -1 (nothing changed) when {@code address} is not a {@code host:port}
     */
    public int leaderHint(String address) {
        if (address == null || hostPortProblem(address.trim()) != null) {
            return -1;
        }
        String a = address.trim();
        while (true) {
            List<String> now = all.get();
            int i = indexOf(now, a);
            if (i < 0) {
                List<String> next = new ArrayList<>(now);
                int learned = next.size() - addresses.size();
                if (learned < MAX_LEARNED) {
                    next.add(a);
                    i = next.size() - 1;
                } else {
                    i = addresses.size() + Math.floorMod(learnedCount.get(), MAX_LEARNED); // the oldest learned slot
                    next.set(i, a);
                }
                if (!all.compareAndSet(now, List.copyOf(next))) {
                    continue; // another thread changed the list: look again
                }
                learnedCount.incrementAndGet();
            }
            preferred.set(i);
            return i;
        }
    }

    /** The index of {@code address} in {@code list}, comparing {@code host:port} with URL prefixes too; or -1. */
    private static int indexOf(List<String> list, String address) {
        String key = bare(address);
        for (int i = 0; i < list.size(); i++) {
            if (bare(list.get(i)).equals(key)) {
                return i;
            }
        }
        return -1;
    }

    /** {@code host:port} of an address or URL prefix, lower case. */
    private static String bare(String a) {
        String s = a.trim().toLowerCase(Locale.ROOT);
        int scheme = s.indexOf("://");
        if (scheme >= 0) {
            s = s.substring(scheme + 3);
        }
        int slash = s.indexOf('/');
        return slash >= 0 ? s.substring(0, slash) : s;
    }

    @Override
    public String toString() {
        return all.get().toString();
    }
}
