package io.hayloft.cache;

import io.hayloft.serverkit.http.HttpServer;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Haystack's admission rules (§3.3): a missed needle is stored only when (a) the request came
 * straight from a user, not from a CDN, and (b) the store holds it on a writable volume. Rule (a):
 * a request carrying the configured CDN header, or whose peer address lies in one of the CDN
 * networks, comes from a CDN. Rule (b) reads the store's {@code X-Hayloft-Volume-State} answer.
 * Either rule can be switched off. Hits are served to everyone; the rules decide only what is kept.
 *
 * <p>Immutable and thread-safe.
 */
public final class Admission {
    private final boolean onlyUsers;
    private final boolean onlyWritable;
    private final String cdnHeader;
    private final List<Cidr> cdnNetworks;

    public Admission(CacheConfig c) {
        this.onlyUsers = c.admitOnlyUsers;
        this.onlyWritable = c.admitOnlyWritable;
        this.cdnHeader = c.cdnHeader;
        this.cdnNetworks = c.cdnNetworks.stream().map(Cidr::parse).toList();
    }

    /** True when the request comes from a CDN (by header or peer network). */
    public boolean fromCdn(HttpRequest request) {
        if (request.headers().contains(cdnHeader)) {
            return true;
        }
        String peer = request.headers().get(HttpServer.PEER_HEADER);
        if (peer == null || cdnNetworks.isEmpty()) {
            return false;
        }
        byte[] addr;
        try {
            addr = InetAddress.getByName(peer).getAddress(); // a literal set by the server: no lookup
        } catch (UnknownHostException e) {
            return false;
        }
        for (Cidr n : cdnNetworks) {
            if (n.contains(addr)) {
                return true;
            }
        }
        return false;
    }

    /** Rule (a): may a miss of this request be stored at all? */
    public boolean admitsRequest(HttpRequest request) {
        return !onlyUsers || !fromCdn(request);
    }

    /** Rule (b): may a needle the store reports in this volume state be stored? */
    public boolean admitsVolumeState(String state) {
        return !onlyWritable || "writable".equals(state);
    }

    /** An IPv4 or IPv6 network in CIDR notation. Immutable. */
    public record Cidr(byte[] network, int prefix) {
        /**
         * @throws IllegalArgumentException naming the bad text
         */
        public static Cidr parse(String text) {
            int slash = text == null ? -1 : text.indexOf('/');
            if (slash <= 0) {
                throw new IllegalArgumentException("CDN network must look like 10.0.0.0/8 or fd00::/8, got '" + text + "'");
            }
            String host = text.substring(0, slash);
            if (!host.chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == '.' || ch == ':')) {
                throw new IllegalArgumentException("CDN network must be an address literal, got '" + text + "'");
            }
            byte[] addr;
            int prefix;
            try {
                addr = InetAddress.getByName(host).getAddress();
                prefix = Integer.parseInt(text.substring(slash + 1));
            } catch (UnknownHostException | NumberFormatException e) {
                throw new IllegalArgumentException("bad CDN network '" + text + "': " + e.getMessage());
            }
            if (prefix < 0 || prefix > addr.length * 8) {
                throw new IllegalArgumentException("prefix of CDN network '" + text + "' must be in 0.." + addr.length * 8);
            }
            return new Cidr(addr, prefix);
        }

        public boolean contains(byte[] addr) {
            if (addr.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (addr[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (addr[full] & mask) == (network[full] & mask);
        }
    }
}
