-- Materialize's quickstart (docs: Get started), with tables standing in for the AUCTION load
-- generator (CREATE SOURCE ... FROM LOAD GENERATOR is 0A000 until sources exist) and queries
-- in place of SUBSCRIBE; run by tests/integration/test_surface_server.py
CREATE TABLE auctions (id bigint, seller bigint, item text, end_time timestamptz);
CREATE TABLE bids (id bigint, buyer bigint, auction_id bigint, amount int, bid_time timestamptz);
INSERT INTO auctions VALUES
  (1, 10, 'Best Pizza in Town', now() - INTERVAL '1 hour'),
  (2, 20, 'Gift Basket', now() - INTERVAL '30 minutes'),
  (3, 30, 'City Bar Crawl', now() + INTERVAL '1 day');
INSERT INTO bids VALUES
  (1, 20, 1, 50, now() - INTERVAL '2 hours'),
  (2, 30, 1, 70, now() - INTERVAL '90 minutes'),
  (3, 10, 2, 40, now() - INTERVAL '40 minutes'),
  (4, 30, 2, 45, now() - INTERVAL '35 minutes'),
  (5, 20, 3, 99, now() - INTERVAL '5 minutes');
SHOW TABLES;
SELECT * FROM auctions ORDER BY id LIMIT 1;
SELECT * FROM bids ORDER BY id LIMIT 1;
SELECT a.id, a.item, b.amount FROM auctions AS a JOIN bids AS b ON a.id = b.auction_id ORDER BY b.id LIMIT 3;
CREATE VIEW winning_bids AS
SELECT DISTINCT ON (a.id) b.*, a.item, a.seller
FROM auctions AS a
 JOIN bids AS b
   ON a.id = b.auction_id
WHERE b.bid_time < a.end_time
  AND mz_now() >= a.end_time
ORDER BY a.id,
  b.amount DESC,
  b.bid_time,
  b.buyer;
CREATE INDEX wins_by_item ON winning_bids (item);
CREATE INDEX wins_by_bidder ON winning_bids (buyer);
CREATE INDEX wins_by_seller ON winning_bids (seller);
SHOW INDEXES;
SELECT * FROM winning_bids WHERE item = 'Best Pizza in Town' ORDER BY bid_time DESC;
\echo -- winning bids
SELECT * FROM winning_bids ORDER BY auction_id;
\echo -- end winning bids
CREATE VIEW fraud_activity AS
SELECT w2.seller,
       w2.item AS seller_item,
       w2.amount AS seller_amount,
       w1.item buyer_item,
       w1.amount buyer_amount
FROM winning_bids w1,
     winning_bids w2
WHERE w1.buyer = w2.seller
  AND w2.amount > w1.amount;
SELECT * FROM fraud_activity LIMIT 100;
CREATE TABLE fraud_accounts (id bigint);
INSERT INTO fraud_accounts VALUES (30);
SELECT buyer, count(*) FROM winning_bids WHERE buyer NOT IN (SELECT id FROM fraud_accounts) GROUP BY buyer ORDER BY count(*) DESC LIMIT 5;
CREATE VIEW funds_movement AS
SELECT id, SUM(credits) AS credits, SUM(debits) AS debits
FROM (
  SELECT seller AS id, amount AS credits, 0 AS debits
  FROM winning_bids
  UNION ALL
  SELECT buyer AS id, 0 AS credits, amount AS debits
  FROM winning_bids
)
GROUP BY id;
SELECT SUM(credits), SUM(debits) FROM funds_movement;
SELECT id, datediff('minute', bid_time, now()) >= 30 AS old FROM bids ORDER BY id;
SHOW OBJECTS;
SHOW VIEWS;
SHOW CLUSTERS;
SHOW CREATE VIEW winning_bids;
DROP VIEW fraud_activity;
DROP VIEW funds_movement;
DROP VIEW winning_bids CASCADE;
DROP TABLE fraud_accounts;
DROP TABLE bids;
DROP TABLE auctions;
