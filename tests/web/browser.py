"""Headless Chromium through Selenium (Debian's chromium, chromium-driver, python3-selenium) at
1280x800, and the waits the browser tests use: WebDriverWait conditions, never sleeps."""
import os
import shutil
import sys

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def require_browser():
    """Exits with SKIP, saying what is missing, when the browser stack is not installed."""
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if missing:
        print("SKIP: the browser tests need %s (apt-get install chromium chromium-driver "
              "python3-selenium)" % ", ".join(missing))
        sys.exit(SKIP)


def start_browser(download_dir=None):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,800", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    # The page itself at 1280x800, whatever the window's frame takes.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    return driver


def wait(driver, condition, timeout=60, message=""):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, message)


def css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def present(selector):
    """A condition: the first element matching `selector` once there is one."""
    def found(driver):
        elements = css(driver, selector)
        return elements[0] if elements else False
    return found


def absent(selector):
    return lambda driver: not css(driver, selector)


def view_ready(view):
    """The app marks its <main> data-ready once a view has shown its data."""
    return present('main[data-view="%s"][data-ready]' % view)


def screenshot(driver, directory, name):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".png")
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(path)
    print("screenshot", path, flush=True)


def count(driver, selector):
    """How many elements match, read in one step in the page (a live view may re-render between
    finding an element and reading it)."""
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def attribute(driver, selector, name):
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e && e.getAttribute(arguments[1])",
        selector, name)


def text(driver, selector):
    """The text of the first element matching `selector` ("" when there is none), in one step."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", selector)


def click(driver, selector, message=""):
    """Clicks the first element matching `selector`, again if a live re-render replaced it."""
    from selenium.common.exceptions import StaleElementReferenceException

    def clicked(d):
        elements = css(d, selector)
        if not elements:
            return False
        try:
            elements[0].click()
            return True
        except StaleElementReferenceException:
            return False
    wait(driver, clicked, message=message or "click " + selector)
