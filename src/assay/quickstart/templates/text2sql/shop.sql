-- A small shop: customers, products, orders and their lines. db.py builds shop.db from this file.
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    joined DATE NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    price REAL NOT NULL
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers(id),
    ordered_on DATE NOT NULL
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    quantity INTEGER NOT NULL
);

INSERT INTO customers VALUES
    (1, 'Ana Lima', 'Lisbon', '2024-01-15'),
    (2, 'Ben Okafor', 'Berlin', '2024-02-03'),
    (3, 'Chiara Rossi', 'Milan', '2024-03-22'),
    (4, 'Dev Patel', 'Berlin', '2024-05-09'),
    (5, 'Emma Novak', 'Prague', '2024-07-30');
INSERT INTO products VALUES
    (1, 'Trail running shoes', 'footwear', 120.0),
    (2, 'Rain jacket', 'clothing', 89.5),
    (3, 'Wool socks', 'clothing', 14.0),
    (4, 'Headlamp', 'gear', 35.0),
    (5, 'Water bottle', 'gear', 18.0),
    (6, 'Hiking boots', 'footwear', 165.0);
INSERT INTO orders VALUES
    (1, 1, '2024-08-01'),
    (2, 2, '2024-08-03'),
    (3, 1, '2024-09-12'),
    (4, 3, '2024-09-20'),
    (5, 4, '2024-10-05'),
    (6, 2, '2024-10-18');
INSERT INTO order_items VALUES
    (1, 1, 1), (1, 3, 2),
    (2, 4, 1), (2, 5, 2),
    (3, 2, 1),
    (4, 6, 1), (4, 3, 3),
    (5, 5, 1),
    (6, 1, 1), (6, 4, 2);
