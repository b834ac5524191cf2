package io.hayloft.common.http;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for Hayloft's listeners and clients from a PKCS#12 keystore: the standard Java format,
 * written by {@code keytool} or {@code openssl pkcs12}. Stateless and thread-safe.
 */
public final class Tls {

    private Tls() {
    }

    /**
     * A server context presenting the key and certificate chain in {@code keystore}, or null when
     * {@code keystore} is null or empty (plain HTTP).
     *
     * @throws IllegalArgumentException naming the file when it is missing, unreadable or holds no key
     */
    public static SslContext server(String keystore, String password) {
        if (keystore == null || keystore.isBlank()) {
            return null;
        }
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(load(keystore, password), chars(password));
            return SslContextBuilder.forServer(kmf).build();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use TLS keystore " + keystore + ": " + e.getMessage(), e);
        }
    }

    /** A client context that trusts the certificates in {@code truststore} (PKCS#12). */
    public static SSLContext client(String truststore, String password) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(load(truststore, password));
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot use TLS truststore " + truststore + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String file, String password) throws IOException, GeneralSecurityException {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new IOException("no such file");
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(p)) {
            ks.load(in, chars(password));
        }
        return ks;
    }

    private static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
    }
}
