package io.hayloft.s3.auth;

/**
 * A request whose signature (header or presigned URL) checked out: who sent it and what its body
 * must still satisfy, for {@link PayloadDecoder}. Immutable; thread-safe; never logs the key.
 *
 * @param accessKey     the caller's access key
 * @param mode          how the body is signed
 * @param payloadSha256 hex SHA-256 the body must have (mode SIGNED), else null
 * @param seedSignature the request's signature: the previous signature of the first chunk (streaming modes)
 * @param amzDate       the request's {@code x-amz-date} (yyyyMMdd'T'HHmmss'Z')
 * @param scope         the credential scope ({@code date/region/s3/aws4_request})
 * @param signingKey    the derived SigV4 signing key for this scope (chunk signatures)
 */
public record Verified(String accessKey, PayloadMode mode, String payloadSha256, String seedSignature, String amzDate,
                       String scope, byte[] signingKey) {
    @Override
    public String toString() {
        return "Verified[" + accessKey + ", " + mode + "]";
    }
}
