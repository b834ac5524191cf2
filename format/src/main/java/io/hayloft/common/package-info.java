/** Ids, wire types, configuration and HTTP plumbing shared by the Hayloft servers. */
package io.hayloft.common;
