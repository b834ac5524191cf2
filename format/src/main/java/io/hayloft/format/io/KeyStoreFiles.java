package io.hayloft.format.io;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;

/**
 * Reads the PKCS#12 files that hold a cluster's CA and each process's key and certificate: the one
 * loader of both the servers' TLS settings (server-kit's {@code Tls}) and the client's
 * ({@code TlsFiles}). Every failure is an {@link IllegalArgumentException} that names the
 * configuration key and the file, never the password; a wrong password is told apart from a file that
 * is not a keystore by the cause's type, not by message text. Stateless; thread-safe.
 */
public final class KeyStoreFiles {

    private KeyStoreFiles() {
    }

    /**
     * @param key      the setting that named the file ({@code tlsKeyStore}, {@code trustStore}, ...), for the message
     * @param password the file's password; null for none
     */
    public static KeyStore load(String key, String file, String password) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException(key + " " + file + ": no such file");
        }
        if (!Files.isReadable(p)) {
            throw new IllegalArgumentException(key + " " + file + ": not readable");
        }
        try (InputStream in = Files.newInputStream(p)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, chars(password));
            return ks;
        } catch (IOException e) {
            // PKCS12KeyStore wraps a wrong password's UnrecoverableKeyException
            String why = e.getCause() instanceof UnrecoverableKeyException
                    ? "wrong password" : "not a PKCS#12 keystore (" + e.getMessage() + ")";
            throw new IllegalArgumentException(key + " " + file + ": " + why, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(key + " " + file + ": cannot be read (" + e.getMessage() + ")", e);
        }
    }

    /** A password as the key-store API takes it: an empty array for none. */
    public static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
    }
}
