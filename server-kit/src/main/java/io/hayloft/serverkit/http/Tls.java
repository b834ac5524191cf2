package io.hayloft.serverkit.http;

import io.hayloft.format.io.KeyStoreFiles;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Collections;
import java.util.Locale;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for Hayloft's listeners and clients from PKCS#12 keystores: the standard Java format,
 * written by {@code keytool} or {@code openssl pkcs12}. Every process takes the same keys
 * ({@link Settings}; docs/directory-api.md "TLS"). Stateless and thread-safe.
 */
public final class Tls {

    private Tls() {
    }

    /** Whether a listener asks its clients for a certificate. */
    public enum ClientAuthMode {
        /** Any TLS client may connect (the default). */
        NONE,
        /** Mutual TLS: only clients presenting a certificate that {@code tlsTrustStore} trusts. */
        REQUIRE;

        /** {@code none} or {@code require} (any case); null or empty is {@code none}. */
        public static ClientAuthMode parse(String s) {
            if (s == null || s.isBlank()) {
                return NONE;
            }
            switch (s.trim().toLowerCase(Locale.ROOT)) {
                case "none":
                    return NONE;
                case "require":
                    return REQUIRE;
                default:
                    throw new IllegalArgumentException("tlsClientAuth must be none or require, was '" + s + "'");
            }
        }
    }

    /**
     * The TLS keys of one process, the same in every server's configuration:
     * <pre>
     * tlsKeyStore            (none)  PKCS#12 with this process's key and certificate chain: its listener
     *                                serves HTTPS, and it is the client certificate of its own calls
     * tlsKeyStorePassword    (none)  its password
     * tlsTrustStore          (none)  PKCS#12 of the certificates (a CA) trusted: to verify the servers
     *                                this process calls, and the clients when tlsClientAuth is require
     * tlsTrustStorePassword  (none)  its password
     * tlsClientAuth          none    none, or require: the listener accepts only clients presenting a
     *                                certificate tlsTrustStore trusts (mutual TLS)
     * </pre>
     * Immutable. {@link #validate()} opens the files and names the file and the problem, never a password.
     */
    public record Settings(String keyStore, String keyStorePassword, String trustStore, String trustStorePassword,
                           ClientAuthMode clientAuth) {

        public Settings {
            keyStore = blankToNull(keyStore);
            trustStore = blankToNull(trustStore);
            clientAuth = clientAuth == null ? ClientAuthMode.NONE : clientAuth;
        }

        /** From the configuration keys; {@code clientAuth} is {@code none}, {@code require} or null. */
        public static Settings of(String keyStore, String keyStorePassword, String trustStore, String trustStorePassword,
                                  String clientAuth) {
            return new Settings(keyStore, keyStorePassword, trustStore, trustStorePassword, ClientAuthMode.parse(clientAuth));
        }

        /** No TLS at all: plain HTTP listener and calls. */
        public static Settings none() {
            return new Settings(null, null, null, null, ClientAuthMode.NONE);
        }

        /** True when the listener serves HTTPS. */
        public boolean listenerTls() {
            return keyStore != null;
        }

        /** True when this process's calls to others use HTTPS (a trust store is set). */
        public boolean clientTls() {
            return trustStore != null;
        }

        /**
         * Opens both stores: the keystore must hold a private key, the trust store a certificate;
         * {@code tlsClientAuth: require} needs both.
         *
         * @throws IllegalArgumentException naming the key, the file and the problem
         */
        public Settings validate() {
            if (clientAuth == ClientAuthMode.REQUIRE) {
                if (keyStore == null) {
                    throw new IllegalArgumentException("tlsClientAuth require needs tlsKeyStore (the listener must serve HTTPS)");
                }
                if (trustStore == null) {
                    throw new IllegalArgumentException("tlsClientAuth require needs tlsTrustStore (to verify client certificates)");
                }
            }
            if (keyStore != null) {
                KeyStore ks = KeyStoreFiles.load("tlsKeyStore", keyStore, keyStorePassword);
                if (!hasKey(ks)) {
                    throw new IllegalArgumentException("tlsKeyStore " + keyStore + ": holds no private key entry");
                }
            }
            if (trustStore != null) {
                KeyStore ts = KeyStoreFiles.load("tlsTrustStore", trustStore, trustStorePassword);
                if (!hasCertificate(ts)) {
                    throw new IllegalArgumentException("tlsTrustStore " + trustStore + ": holds no certificate");
                }
            }
            return this;
        }

        /** The listener's context (client certificates required when so configured), or null for plain HTTP. */
        public SslContext serverContext() {
            if (keyStore == null) {
                return null;
            }
            try {
                SslContextBuilder b = SslContextBuilder.forServer(keyManagers("tlsKeyStore", keyStore, keyStorePassword));
                if (clientAuth == ClientAuthMode.REQUIRE) {
                    b.trustManager(trustManagers("tlsTrustStore", trustStore, trustStorePassword)).clientAuth(ClientAuth.REQUIRE);
                }
                return b.build();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot use tlsKeyStore " + keyStore + ": " + e.getMessage(), e);
            }
        }

        /**
         * The context of this process's calls to other servers (for the client library's transport):
         * trusts {@code tlsTrustStore} and presents {@code tlsKeyStore}, when set, as the client
         * certificate; null when no trust store is set (calls use plain HTTP).
         */
        public SSLContext clientContext() {
            if (trustStore == null) {
                return null;
            }
            try {
                SSLContext ctx = SSLContext.getInstance("TLS");
                ctx.init(keyStore == null ? null : keyManagers("tlsKeyStore", keyStore, keyStorePassword).getKeyManagers(),
                        trustManagers("tlsTrustStore", trustStore, trustStorePassword).getTrustManagers(), null);
                return ctx;
            } catch (GeneralSecurityException e) {
                throw new IllegalArgumentException("cannot build a TLS client context: " + e.getMessage(), e);
            }
        }

        @Override
        public String toString() {
            return "Tls.Settings[keyStore=" + keyStore + ", trustStore=" + trustStore + ", clientAuth=" + clientAuth + "]";
        }
    }

    /**
     * A server context presenting the key and certificate chain in {@code keystore}, or null when
     * {@code keystore} is null or empty (plain HTTP).
     *
     * @throws IllegalArgumentException naming the file when it is missing, unreadable or holds no key
     */
    public static SslContext server(String keystore, String password) {
        return new Settings(keystore, password, null, null, ClientAuthMode.NONE).serverContext();
    }

    /** A client context that trusts the certificates in {@code truststore} (PKCS#12). */
    public static SSLContext client(String truststore, String password) {
        if (truststore == null || truststore.isBlank()) {
            throw new IllegalArgumentException("a TLS truststore is required");
        }
        return new Settings(null, null, truststore, password, ClientAuthMode.NONE).clientContext();
    }

    private static KeyManagerFactory keyManagers(String key, String file, String password) {
        try {
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(KeyStoreFiles.load(key, file, password), KeyStoreFiles.chars(password));
            return kmf;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(key + " " + file + ": cannot use its key: " + e.getMessage(), e);
        }
    }

    private static TrustManagerFactory trustManagers(String key, String file, String password) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(KeyStoreFiles.load(key, file, password));
            return tmf;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(key + " " + file + ": cannot use its certificates: " + e.getMessage(), e);
        }
    }


    private static boolean hasKey(KeyStore ks) {
        try {
            for (String alias : Collections.list(ks.aliases())) {
                if (ks.isKeyEntry(alias)) {
                    return true;
                }
            }
            return false;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static boolean hasCertificate(KeyStore ks) {
        try {
            for (String alias : Collections.list(ks.aliases())) {
                if (ks.getCertificate(alias) != null) {
                    return true;
                }
            }
            return false;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

}
