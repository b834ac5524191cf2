/** The store server: Haystack physical volumes of needles, served over HTTP. */
package io.hayloft.store;
