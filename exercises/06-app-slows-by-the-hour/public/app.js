// The browser side of the site: fetches the home page's rows from the API and draws them.
(async function main() {
  const root = document.getElementById('rows');
  try {
    const response = await fetch('/api/pages/home');
    if (!response.ok) throw new Error(`GET /api/pages/home answered ${response.status}`);
    const page = await response.json();
    root.textContent = '';
    for (const row of page.rows) {
      const section = document.createElement('section');
      const heading = document.createElement('h2');
      heading.textContent = row.name;
      section.append(heading);
      const list = document.createElement('ol');
      for (const title of row.titles) {
        const item = document.createElement('li');
        item.textContent = `${title.name} (${title.year}, ${title.maturity})`;
        item.dataset.titleId = title.id;
        list.append(item);
      }
      section.append(list);
      root.append(section);
    }
  } catch (error) {
    root.textContent = `Something went wrong: ${error.message}`;
  }
})();
