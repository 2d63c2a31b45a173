#!/usr/bin/env python3
"""Build the FoodMart-style sample database (SQLite) deterministically.

    python -m evalnb.examples.foodmart.build          # writes ./foodmart.db
    python -m evalnb.examples.foodmart.build OUT.db   # writes OUT.db

``evalnb.examples.foodmart_db()`` runs it once, into the user cache folder, and returns the path.

Only the standard library is used (``sqlite3``, ``random`` with a fixed seed), so the same file comes out on
every machine in a few seconds. The line items are synthetic; their aggregates are fixed to the published
figures of the FoodMart 1997 Sales cube (see README.md beside this file). Every amount is stored in integer
cents and every split is an exact integer allocation, so the sums hold to the cent.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SEED = 1997
SCHEMA_VERSION = 1

# ---- the published figures (FoodMart 1997 Sales cube) ------------------------------------------------
# Unit Sales and Store Sales (in cents) per product family and per store state; the USA is the only country.
FAMILY_UNITS = {"Drink": 24_597, "Food": 191_940, "Non-Consumable": 50_236}
FAMILY_CENTS = {"Drink": 4_883_621, "Food": 40_903_559, "Non-Consumable": 10_736_633}
STATE_UNITS = {"CA": 74_748, "OR": 67_659, "WA": 124_366}
STATE_CENTS = {"CA": 15_916_784, "OR": 14_227_707, "WA": 26_379_322}
# Unit Sales per month and Store Sales per quarter of 1997.
MONTH_UNITS = [21_628, 20_957, 23_706, 20_179, 21_081, 21_350, 23_763, 21_697, 20_388, 19_958, 25_270, 26_796]
QUARTER_CENTS = [13_962_835, 13_266_627, 14_027_189, 15_267_162]

STATE_NAMES = {"CA": "California", "OR": "Oregon", "WA": "Washington"}
# The USA stores of FoodMart: (id, city, state, type, square feet).
STORES = [
    (2, "Bellingham", "WA", "Small Grocery", 28_206),
    (3, "Bremerton", "WA", "Supermarket", 39_696),
    (6, "Beverly Hills", "CA", "Gourmet Supermarket", 23_688),
    (7, "Los Angeles", "CA", "Supermarket", 23_598),
    (11, "Portland", "OR", "Supermarket", 20_319),
    (13, "Salem", "OR", "Deluxe Supermarket", 27_694),
    (14, "San Francisco", "CA", "Small Grocery", 22_478),
    (15, "Seattle", "WA", "Supermarket", 21_215),
    (16, "Spokane", "WA", "Supermarket", 30_268),
    (17, "Tacoma", "WA", "Deluxe Supermarket", 33_858),
    (22, "Walla Walla", "WA", "Small Grocery", 23_759),
    (23, "Yakima", "WA", "Mid-Size Grocery", 25_011),
    (24, "San Diego", "CA", "Supermarket", 35_123),
]

# family -> department -> category -> item words used for synthetic product names
PRODUCTS: dict[str, dict[str, dict[str, list[str]]]] = {
    "Drink": {
        "Alcoholic Beverages": {
            "Beer and Wine": ["Imported Beer", "Light Beer", "Chardonnay", "Merlot Wine"]
        },
        "Beverages": {
            "Carbonated Beverages": ["Cola", "Diet Soda", "Lemon-Lime Soda"],
            "Drinks": ["Apple Drink", "Cranberry Juice", "Mango Drink"],
            "Hot Beverages": ["Columbian Coffee", "Decaf Coffee", "Chamomile Tea"],
            "Pure Juice Beverages": ["Orange Juice", "Apple Juice", "Berry Juice"],
        },
        "Dairy": {"Dairy": ["Whole Milk", "Chocolate Milk", "Buttermilk"]},
    },
    "Food": {
        "Baked Goods": {"Bread": ["Wheat Bread", "Rye Bread", "English Muffins", "Bagels"]},
        "Baking Goods": {
            "Baking Goods": ["Flour", "Sugar", "Salt", "Cooking Oil"],
            "Jams and Jellies": ["Grape Jelly", "Strawberry Preserves", "Peanut Butter"],
        },
        "Breakfast Foods": {"Breakfast Foods": ["Corn Puffs", "Oatmeal", "Wheat Flakes"]},
        "Canned Foods": {
            "Canned Soup": ["Chicken Noodle Soup", "Tomato Soup", "Clam Chowder"],
            "Canned Tuna": ["Chunk Light Tuna", "White Tuna"],
            "Vegetables": ["Canned Peas", "Canned Corn", "Canned Beets"],
        },
        "Canned Products": {"Fruit": ["Canned Peaches", "Fruit Cocktail"]},
        "Dairy": {"Dairy": ["Cheddar Cheese", "Yogurt", "Sour Cream", "Butter"]},
        "Deli": {"Meat": ["Sliced Turkey", "Sliced Ham"], "Side Dishes": ["Potato Salad", "Coleslaw"]},
        "Eggs": {"Eggs": ["Large Eggs", "Egg Substitute"]},
        "Frozen Foods": {
            "Frozen Desserts": ["Ice Cream", "Popsicles"],
            "Frozen Entrees": ["TV Dinner", "Frozen Chicken Wings"],
            "Pizza": ["Frozen Cheese Pizza", "Frozen Pepperoni Pizza"],
            "Vegetables": ["Frozen Peas", "Frozen Broccoli"],
        },
        "Meat": {"Meat": ["Hot Dogs", "Chicken Breasts", "Ground Beef"]},
        "Produce": {
            "Fruit": ["Fresh Apples", "Bananas", "Oranges", "Lemons"],
            "Vegetables": ["Fresh Lettuce", "Potatoes", "Tomatos", "Green Pepper"],
            "Specialty": ["Walnuts", "Almonds"],
        },
        "Seafood": {"Seafood": ["Canned Shrimp", "Fresh Salmon"]},
        "Snack Foods": {"Snack Foods": ["Potato Chips", "Pretzels", "Popcorn", "Cookies"]},
        "Snacks": {"Candy": ["Chocolate Bar", "Mints", "Gum"]},
        "Starchy Foods": {"Starchy Foods": ["Spaghetti", "Rice Medly", "Egg Noodles"]},
    },
    "Non-Consumable": {
        "Carousel": {"Specialty": ["Sunglasses", "Glass Ornaments"]},
        "Checkout": {"Hardware": ["AAA-Size Batteries", "Lightbulbs"], "Miscellaneous": ["Lighters"]},
        "Health and Hygiene": {
            "Bathroom Products": ["Shampoo", "Toothpaste", "Conditioner"],
            "Cold Remedies": ["Cold Remedy", "Cough Drops"],
            "Pain Relievers": ["Aspirin", "Ibuprofen"],
        },
        "Household": {
            "Cleaning Supplies": ["Laundry Detergent", "Glass Cleaner"],
            "Kitchen Products": ["Paper Plates", "Plastic Forks"],
            "Paper Products": ["Paper Towels", "Toilet Paper", "Napkins"],
        },
        "Periodicals": {"Magazines": ["Home Magazine", "Sports Magazine"]},
    },
}
BRANDS = [
    "Good", "Pearl", "Portsmouth", "Excellent", "Fabulous", "Skinner", "Washington", "Cormorant", "Hermanos",
    "Tell Tale", "Ebony", "Tri-State", "High Top", "Golden", "Imagine", "Big Time", "Carrington", "Red Spade",
    "Sunset", "Hilltop", "Bird Call", "Steady", "Akron", "Gorilla", "Booker", "Club", "Plato", "Nationeel",
]  # fmt: skip
FIRST = ["Mary", "James", "Linda", "Robert", "Patricia", "John", "Jennifer", "Michael", "Susan", "David",
         "Karen", "William", "Nancy", "Richard", "Lisa", "Thomas", "Betty", "Daniel", "Sandra", "Paul"]  # fmt: skip
LAST = ["Smith", "Johnson", "Garcia", "Miller", "Davis", "Lopez", "Wilson", "Anderson", "Taylor", "Moore",
        "Jackson", "Martin", "Lee", "Thompson", "White", "Harris", "Clark", "Lewis", "Young", "Walker"]  # fmt: skip
INCOMES = ["$10K - $30K", "$30K - $50K", "$50K - $70K", "$70K - $90K", "$90K - $110K", "$110K - $130K"]
EDUCATION = [
    "Partial High School",
    "High School Degree",
    "Partial College",
    "Bachelors Degree",
    "Graduate Degree",
]
CARDS = ["Bronze", "Normal", "Silver", "Golden"]
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December"]  # fmt: skip


# ---- exact integer allocation ------------------------------------------------------------------------


def split(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` that sum exactly to ``total``.

    Largest-remainder rounding, ties broken by position, so the result is deterministic.
    """
    wsum = float(sum(weights))
    raw = [total * w / wsum for w in weights]
    out = [int(r) for r in raw]
    short = total - sum(out)
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - out[i]), i))
    for i in order[:short]:
        out[i] += 1
    return out


def fit(rows: Sequence[int], cols: Sequence[int], rng: random.Random, noise: float = 0.25) -> list[list[int]]:
    """A non-negative integer matrix whose row sums are ``rows`` and column sums are ``cols`` exactly.

    Random positive weights are fitted to both margins by iterative proportional fitting; every row but the
    last is then rounded with :func:`split` and the last row takes what each column still lacks.
    """
    assert sum(rows) == sum(cols), (sum(rows), sum(cols))
    x = [[r * c * (1 + noise * (rng.random() - 0.5)) for c in cols] for r in rows]
    for _ in range(200):
        for i, r in enumerate(rows):
            s = sum(x[i])
            x[i] = [v * r / s for v in x[i]]
        for j, c in enumerate(cols):
            s = sum(x[i][j] for i in range(len(rows)))
            for i in range(len(rows)):
                x[i][j] *= c / s
    out = [split(r, x[i]) for i, r in enumerate(rows[:-1])]
    last = [c - sum(out[i][j] for i in range(len(out))) for j, c in enumerate(cols)]
    if min(last) < 0:  # cannot happen with the figures above (large cells); guard the invariant anyway
        raise AssertionError("allocation produced a negative cell")
    return [*out, last]


# ---- dimensions ----------------------------------------------------------------------------------------


def _products(rng: random.Random) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    classes: list[tuple[object, ...]] = []
    products: list[tuple[object, ...]] = []
    brand_i = 0
    for family, departments in PRODUCTS.items():
        for department, categories in departments.items():
            for category, items in categories.items():
                class_id = len(classes) + 1
                classes.append((class_id, category, department, family))
                for item in items:
                    for _ in range(2):  # two brands per item
                        brand = BRANDS[brand_i % len(BRANDS)]
                        brand_i += 1
                        srp = rng.randint(49, 399)  # cents per unit
                        cost_ratio = round(rng.uniform(0.36, 0.44), 4)
                        weight = round(rng.uniform(0.5, 2.0), 3)
                        products.append(
                            (len(products) + 1, class_id, brand, f"{brand} {item}", srp, cost_ratio, weight)
                        )
    return classes, products


def _days() -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    day = dt.date(1997, 1, 1)
    while day.year == 1997:
        doy = day.timetuple().tm_yday
        week = min((doy - 1) // 7 + 1, 52)  # 7-day weeks from 1 January; week 52 takes 31 December
        out.append(
            (
                len(out) + 1,
                day.isoformat(),
                day.strftime("%A"),
                MONTH_NAMES[day.month - 1],
                day.month,
                day.day,
                week,
                f"Q{(day.month - 1) // 3 + 1}",
                1997,
            )
        )
        day += dt.timedelta(days=1)
    return out


def _customers(rng: random.Random) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    cities = {s: [st[1] for st in STORES if st[2] == s] for s in STATE_UNITS}
    for state, n in (("CA", 1400), ("OR", 1300), ("WA", 2300)):
        for _ in range(n):
            first, last = rng.choice(FIRST), rng.choice(LAST)
            out.append(
                (
                    len(out) + 1,
                    f"{first} {last}",
                    rng.choice("FM"),
                    rng.choice("SM"),
                    rng.choice(INCOMES),
                    rng.choice(EDUCATION),
                    rng.choice(CARDS),
                    rng.choice(cities[state]),
                    state,
                    "USA",
                )
            )
    return out


# ---- facts ---------------------------------------------------------------------------------------------


def _facts(
    rng: random.Random,
    products: list[tuple[object, ...]],
    classes: list[tuple[object, ...]],
    days: list[tuple[object, ...]],
    customers: list[tuple[object, ...]],
) -> list[tuple[int, int, int, int, int, int, int]]:
    families = list(FAMILY_UNITS)
    states = list(STATE_UNITS)
    cells = [(f, s) for f in range(3) for s in range(3)]
    units_fm, cents_fq = _margins(rng, families, states, cells)
    by_family, stores_of, custs_of, days_of = _indexes(products, classes, days, customers, families, states)
    weekday_w = {"Saturday": 1.3, "Sunday": 1.2, "Friday": 1.1}

    facts: list[tuple[int, int, int, int, int, int, int]] = []
    for ci, (f, s) in enumerate(cells):
        prods = by_family[families[f]]
        pweights = [float(p[6]) for p in prods]
        stores = stores_of[states[s]]
        sweights = [float(st[4]) for st in stores]
        for q in range(4):
            months = [3 * q + 1, 3 * q + 2, 3 * q + 3]
            m_units = [units_fm[ci][m - 1] for m in months]
            m_cents = split(cents_fq[ci][q], m_units)
            for m, units, cents in zip(months, m_units, m_cents, strict=True):
                if units == 0:
                    continue
                facts += _month_lines(
                    rng,
                    units,
                    cents,
                    (prods, pweights),
                    (days_of[m], weekday_w),
                    (stores, sweights),
                    custs_of[states[s]],
                )
    facts.sort(key=lambda r: (r[1], r[3], r[0], r[2]))
    return facts


def _margins(
    rng: random.Random, families: list[str], states: list[str], cells: list[tuple[int, int]]
) -> tuple[list[list[int]], list[list[int]]]:
    """Family x state margins, then each of those 9 cells over months (units) and quarters (cents)."""
    units_fs = fit([FAMILY_UNITS[f] for f in families], [STATE_UNITS[s] for s in states], rng)
    cents_fs = fit([FAMILY_CENTS[f] for f in families], [STATE_CENTS[s] for s in states], rng)
    units_fm = fit([units_fs[f][s] for f, s in cells], MONTH_UNITS, rng, noise=0.1)
    cents_fq = fit([cents_fs[f][s] for f, s in cells], QUARTER_CENTS, rng, noise=0.1)
    return units_fm, cents_fq


def _indexes(
    products: list[tuple[object, ...]],
    classes: list[tuple[object, ...]],
    days: list[tuple[object, ...]],
    customers: list[tuple[object, ...]],
    families: list[str],
    states: list[str],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[int]], dict[int, Any]]:
    """The products of each family, the stores and customers of each state, the days of each month."""
    family_of_class = {c[0]: c[3] for c in classes}
    by_family = {f: [p for p in products if family_of_class[p[1]] == f] for f in families}
    stores_of = {s: [st for st in STORES if st[2] == s] for s in states}
    custs_of = {s: [int(c[0]) for c in customers if c[8] == s] for s in states}  # type: ignore[call-overload]
    days_of = {m: [d for d in days if d[4] == m] for m in range(1, 13)}
    return by_family, stores_of, custs_of, days_of


def _spread(rng: random.Random, units: int) -> list[int]:
    """Quantities of ``units`` over about units/3 lines, at most 6 units on a line (as in FoodMart)."""
    k = max(1, round(units / 3.07))
    qty = [1] * k
    for _ in range(units - k):
        i = rng.randrange(k)
        while qty[i] >= 6:
            i = rng.randrange(k)
        qty[i] += 1
    return qty


def _month_lines(
    rng: random.Random,
    units: int,
    cents: int,
    products: tuple[list[Any], list[float]],
    days: tuple[list[Any], dict[str, float]],
    stores: tuple[list[Any], list[float]],
    customers: list[int],
) -> list[tuple[int, int, int, int, int, int, int]]:
    """The fact rows of one family x state cell in one month: its units and cents over lines of weighted
    products, days (weekends busier) and stores."""
    qty = _spread(rng, units)
    k = len(qty)
    prods, pweights = products
    chosen = rng.choices(prods, weights=pweights, k=k)
    provisional = [q_ * int(p[4]) for q_, p in zip(qty, chosen, strict=True)]
    amounts = split(cents, provisional)
    mdays, weekday_w = days
    dchosen = rng.choices(mdays, weights=[weekday_w.get(str(d[2]), 1.0) for d in mdays], k=k)
    schosen = rng.choices(stores[0], weights=stores[1], k=k)
    lines: list[tuple[int, int, int, int, int, int, int]] = []
    for qn, p, amount, d, st in zip(qty, chosen, amounts, dchosen, schosen, strict=True):
        cost = round(amount * float(p[5]))
        lines.append((int(p[0]), int(d[0]), rng.choice(customers), st[0], qn, amount, cost))
    return lines


DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE store (
  store_id INTEGER PRIMARY KEY, store_name TEXT NOT NULL, store_type TEXT NOT NULL, store_city TEXT NOT NULL,
  store_state TEXT NOT NULL, store_state_name TEXT NOT NULL, store_country TEXT NOT NULL,
  store_sqft INTEGER NOT NULL);
CREATE TABLE product_class (
  product_class_id INTEGER PRIMARY KEY, product_category TEXT NOT NULL, product_department TEXT NOT NULL,
  product_family TEXT NOT NULL);
CREATE TABLE product (
  product_id INTEGER PRIMARY KEY, product_class_id INTEGER NOT NULL REFERENCES product_class,
  brand_name TEXT NOT NULL, product_name TEXT NOT NULL, srp_cents INTEGER NOT NULL);
CREATE TABLE time_by_day (
  time_id INTEGER PRIMARY KEY, the_date TEXT NOT NULL, the_day TEXT NOT NULL, the_month TEXT NOT NULL,
  month_of_year INTEGER NOT NULL, day_of_month INTEGER NOT NULL, week_of_year INTEGER NOT NULL,
  quarter TEXT NOT NULL, the_year INTEGER NOT NULL);
CREATE TABLE customer (
  customer_id INTEGER PRIMARY KEY, fullname TEXT NOT NULL, gender TEXT NOT NULL, marital_status TEXT NOT NULL,
  yearly_income TEXT NOT NULL, education TEXT NOT NULL, member_card TEXT NOT NULL, city TEXT NOT NULL,
  state_province TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE sales_fact_1997 (
  product_id INTEGER NOT NULL REFERENCES product, time_id INTEGER NOT NULL REFERENCES time_by_day,
  customer_id INTEGER NOT NULL REFERENCES customer, store_id INTEGER NOT NULL REFERENCES store,
  unit_sales INTEGER NOT NULL, store_sales_cents INTEGER NOT NULL, store_cost_cents INTEGER NOT NULL);
"""


def build(path: str | Path) -> Path:
    """Write the sample database to ``path`` (replacing it) and return the path.

    Example::

        build("foodmart.db")
        # PosixPath('foodmart.db')
    """
    path = Path(path)
    rng = random.Random(SEED)
    classes, products = _products(rng)
    days = _days()
    customers = _customers(rng)
    facts = _facts(rng, products, classes, days, customers)

    # A temporary file of its own beside the target, then one rename: two processes building at once each
    # write their own file, and a reader sees no database or a complete one.
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    con = sqlite3.connect(tmp)
    try:
        con.executescript(DDL)
        con.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", str(SCHEMA_VERSION)),
                                                          ("seed", str(SEED))])  # fmt: skip
        con.executemany(
            "INSERT INTO store VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(i, f"Store {i}", t, c, s, STATE_NAMES[s], "USA", sq) for i, c, s, t, sq in STORES],
        )
        con.executemany("INSERT INTO product_class VALUES (?, ?, ?, ?)", classes)
        con.executemany("INSERT INTO product VALUES (?, ?, ?, ?, ?)", [p[:5] for p in products])
        con.executemany("INSERT INTO time_by_day VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", days)
        con.executemany("INSERT INTO customer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", customers)
        con.executemany("INSERT INTO sales_fact_1997 VALUES (?, ?, ?, ?, ?, ?, ?)", facts)
        con.executescript(
            "CREATE INDEX sales_time ON sales_fact_1997(time_id);"
            "CREATE INDEX sales_store ON sales_fact_1997(store_id);"
            "CREATE INDEX sales_product ON sales_fact_1997(product_id);"
        )
        con.commit()
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    os.chmod(tmp, 0o644)  # mkstemp made it private; the database is no secret
    tmp.replace(path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = Path(args[0]) if args else Path("foodmart.db")
    build(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
