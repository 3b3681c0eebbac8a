/**
 * The edge GraphQL schema (DESIGN §2 "Edge BFF"). Products are public; the cart, orders and
 * checkout act for the bearer token's subject and never take a customer id; the product
 * administration needs `products.manage` (or Administrator). No input carries a price: prices
 * come from the catalog. Every error names its kind in `errors[].extensions.code`.
 */
/** A page's size when the query names none (or passes null, which means the same). */
export const DEFAULT_PAGE_SIZE = 20;

export const typeDefs = /* GraphQL */ `
"""
An integer from -(2^53 - 1) to 2^53 - 1, sent as a JSON number: amounts in minor units and stock
counts, which do not fit GraphQL's 32-bit Int.
"""
scalar SafeInt

"An instant, as an ISO 8601 string in UTC (2025-01-31T12:00:00.000Z)."
scalar DateTime

enum ProductStatus {
  "For sale."
  ACTIVE
  "Not for sale: still readable, and in past orders, but refused by carts and checkouts."
  ARCHIVED
}

enum OrderStatus {
  "Placed, its stock not yet held (not produced today: a checkout holds the stock when it places the order)."
  PENDING
  "Placed, its stock reserved."
  CONFIRMED
  "Cancelled; its stock went back (once)."
  CANCELLED
}

type Product {
  id: ID!
  sku: String!
  name: String!
  description: String!
  "Price in minor units of currency (cents for EUR and USD)."
  priceMinor: SafeInt!
  "ISO 4217 code."
  currency: String!
  status: ProductStatus!
  "Units a checkout may still take (on hand minus reserved)."
  available: SafeInt!
  "Stock detail, for holders of products.manage (FORBIDDEN otherwise)."
  stock: Stock!
}

"The stock of a product (administration)."
type Stock {
  "Units in the warehouse."
  onHand: SafeInt!
  "Units held by placed orders."
  reserved: SafeInt!
  "onHand minus reserved."
  available: SafeInt!
}

type ProductConnection {
  "Oldest first."
  products: [Product!]!
  "Pass as pageToken for the next page; null on the last page."
  nextPageToken: String
}

type CartLine {
  productId: ID!
  quantity: Int!
  "The product as it is now (one catalog call for all the lines of a response)."
  product: Product
}

"The caller's cart (one per customer)."
type Cart {
  customerId: ID!
  lines: [CartLine!]!
  "Sum of quantity times the current catalog price of each line."
  subtotalMinor: SafeInt!
  "The lines' currency; null for an empty cart."
  currency: String
}

type OrderLine {
  productId: ID!
  quantity: Int!
  "The catalog price when the order was placed."
  unitPriceMinor: SafeInt!
  "The product's sku when the order was placed."
  sku: String!
  "The product's name when the order was placed."
  name: String!
  "The product as it is now (one catalog call for all the lines of a response)."
  product: Product
}

type Order {
  id: ID!
  customerId: ID!
  status: OrderStatus!
  "Sorted by product id."
  lines: [OrderLine!]!
  "Sum of quantity times unitPriceMinor."
  totalMinor: SafeInt!
  currency: String!
  createdAt: DateTime!
  updatedAt: DateTime!
}

type OrderConnection {
  "Newest first."
  orders: [Order!]!
  "Pass as pageToken for the next page; null on the last page."
  nextPageToken: String
}

type Query {
  "The catalog (public). pageSize 1..100; status: every status when absent; q: a case-insensitive substring of the sku, name or description (at most 200 characters)."
  products(pageSize: Int = ${DEFAULT_PAGE_SIZE}, pageToken: String, status: ProductStatus, q: String): ProductConnection!
  "One product (public); null when there is no such product."
  product(id: ID!): Product
  "The caller's cart (bearer token). A customer without one gets an empty cart."
  cart: Cart!
  "The caller's orders (bearer token), newest first. pageSize 1..100."
  orders(pageSize: Int = ${DEFAULT_PAGE_SIZE}, pageToken: String, status: OrderStatus): OrderConnection!
  "One of the caller's orders (bearer token); null when there is none with this id for the caller."
  order(id: ID!): Order
}

input CartLineInput {
  productId: ID!
  "1..1000."
  quantity: Int!
}

input CheckoutLineInput {
  productId: ID!
  "1..1000."
  quantity: Int!
}

input CheckoutInput {
  """
  1..200 printable ASCII characters, chosen by the client and unique per purchase. Repeating a
  checkout with the same key and lines returns the first order (nothing is reserved twice); the
  same key with other lines is refused with IDEMPOTENCY_CONFLICT.
  """
  idempotencyKey: String!
  "The lines to buy (at most 50, one per product); absent or empty: the caller's cart."
  lines: [CheckoutLineInput!]
}

"A new product (administration). The sku is unique: upper-case letters, digits, '-', '_' and '.'."
input CreateProductInput {
  sku: String!
  name: String!
  description: String = ""
  "0..10^11 minor units."
  priceMinor: SafeInt!
  "ISO 4217 code (3 upper-case letters)."
  currency: String!
  "Initial stock, 0..10^9."
  onHand: SafeInt = 0
}

"Fields given replace, fields absent stay. Stock changes only through adjustStock."
input UpdateProductInput {
  sku: String
  name: String
  description: String
  priceMinor: SafeInt
  currency: String
  "ACTIVE puts an archived product back on sale; ARCHIVED is archiveProduct."
  status: ProductStatus
}

"Exactly one of delta and setOnHand."
input AdjustStockInput {
  "Added to the units on hand (negative: removed)."
  delta: SafeInt
  "The new count of units on hand."
  setOnHand: SafeInt
}

type Mutation {
  "Replaces the caller's cart with these lines (at most 50, one per product; empty empties it). Every product must be ACTIVE (PRODUCT_UNAVAILABLE) and in one currency. Stock is checked at checkout."
  updateCart(lines: [CartLineInput!]!): Cart!
  "Empties the caller's cart."
  clearCart: Cart!
  """
  Places an order for the caller, all or nothing: the stock of every line is reserved (or none is,
  INSUFFICIENT_STOCK), prices come from the catalog, the cart is emptied. An archived or unknown
  product: PRODUCT_UNAVAILABLE. Idempotent per idempotencyKey.
  """
  checkout(input: CheckoutInput!): Order!
  "The same as checkout (the name existing storefront clients use)."
  createOrder(input: CheckoutInput!): Order!
  "Cancels one of the caller's orders; its stock goes back once. Cancelling a cancelled order returns it unchanged."
  cancelOrder(id: ID!): Order!

  "Administration (products.manage or Administrator): creates a product, ACTIVE."
  createProduct(input: CreateProductInput!): Product!
  "Administration (products.manage or Administrator): changes a product's fields."
  updateProduct(id: ID!, input: UpdateProductInput!): Product!
  "Administration (products.manage or Administrator): takes a product off sale (ARCHIVED); archiving an archived product changes nothing."
  archiveProduct(id: ID!): Product!
  "Administration (products.manage or Administrator): changes the units on hand, never below what placed orders reserve (INSUFFICIENT_STOCK) nor below 0."
  adjustStock(id: ID!, input: AdjustStockInput!): Product!
}
`;
