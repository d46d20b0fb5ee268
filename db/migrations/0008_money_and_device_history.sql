-- JouleBench results store, schema version 8 (issue 12): money and device edits.
-- Exchange rates: one rate per currency pair, editable, each with the date it holds for and its source.
-- `rate` converts one unit of from_currency into to_currency (1 CAD = 0.80 USD: from CAD, to USD, 0.80).
-- Device edit history: every change a user makes to a catalog field, old and new value as text.

CREATE TABLE exchange_rates (
    from_currency VARCHAR NOT NULL CHECK (length(from_currency) = 3 AND from_currency = upper(from_currency)),
    to_currency   VARCHAR NOT NULL CHECK (length(to_currency) = 3 AND to_currency = upper(to_currency)),
    rate          DOUBLE NOT NULL CHECK (rate > 0),
    rate_date     VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (from_currency, to_currency),
    CHECK (from_currency <> to_currency)
);

-- The reference prices are in CAD (the blog, 2021-03-16) and USD (the Jetson paper): one rate joins them.
INSERT INTO exchange_rates VALUES
    ('CAD', 'USD', 0.80, '2021-03-16',
     'approximate market rate on the date of the blog''s CAD prices (about 1.25 CAD per USD); a default to check and edit',
     now());

CREATE SEQUENCE device_edit_id_seq START 1;

CREATE TABLE device_edits (
    edit_id      INTEGER PRIMARY KEY DEFAULT nextval('device_edit_id_seq'),
    edited_at    TIMESTAMPTZ NOT NULL,
    device_name  VARCHAR NOT NULL,
    column_name  VARCHAR NOT NULL,
    old_value    VARCHAR,
    new_value    VARCHAR
);
